"""Declared clusters: machines that form one cluster and the network between them (docs/PLANNING.md)."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from app.contracts import ClusterCreate, ClusterRead, Name
from app.db import clusters
from app.server.deps import Admin, DatabaseDep, Reader
from app.server.routes.machines import admin_named

router = APIRouter(prefix="/clusters", tags=["clusters"])


@router.get("")
def list_clusters(_reader: Reader, db: DatabaseDep) -> list[ClusterRead]:
    with db.reading() as session:
        return [clusters.to_read(row) for row in clusters.everything(session)]


@router.post("", status_code=status.HTTP_201_CREATED)
def create_cluster(body: ClusterCreate, admin: Admin, db: DatabaseDep) -> ClusterRead:
    """Declare machines that form one cluster and their network: plans over more devices than one
    machine holds cross it (PlanRequest.cluster.declared), and data-parallel runs over its machines
    calibrate it. 409 when the name is taken or a member is retired, 404 for an unknown machine."""
    with db.writing() as session:
        return clusters.to_read(clusters.create(session, body, by=admin_named(admin)))


@router.get("/{name}")
def get_cluster(name: Name, _reader: Reader, db: DatabaseDep) -> ClusterRead:
    with db.reading() as session:
        return clusters.to_read(clusters.get(session, name))


@router.delete("/{name}", status_code=status.HTTP_204_NO_CONTENT)
def delete_cluster(name: Name, _admin: Admin, db: DatabaseDep) -> Response:
    """Forget the declaration; results measured over the cluster keep its name."""
    with db.writing() as session:
        clusters.delete(session, name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
