"""Ask the recommender: a ranked answer for a WorkloadSpec, one estimate for one config, or a plan."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.contracts import (
    Estimate,
    Plan,
    PlanRequest,
    PredictionRequest,
    Recommendation,
    ServingPlan,
    ServingRequest,
    WorkloadSpec,
)
from app.planner import plan, serving
from app.recommender import predict, recommend
from app.server.deps import DatabaseDep, HeavyTurn, Reader

router = APIRouter(tags=["recommender"])


@router.post("/recommendations", response_model=Recommendation)
def post_recommendation(spec: WorkloadSpec, _reader: Reader, _turn: HeavyTurn, db: DatabaseDep) -> Response:
    """Every hardware x runtime x precision x batch for the workload: ranked by the objective, the
    Pareto front of throughput vs power marked, the rejected ones with their reasons."""
    with db.reading() as session:
        answer = recommend(session, spec)
    # serialised once: the answer is already a validated Recommendation (FastAPI would dump it to a
    # dict, validate that again and serialise it; hundreds of candidates make that noticeable)
    return Response(answer.model_dump_json(), media_type="application/json")


@router.post("/predictions")
def post_prediction(request: PredictionRequest, _reader: Reader, db: DatabaseDep) -> Estimate:
    """One hardware (catalog_id, or machine_id and device) and one config: measured, interpolated or predicted."""
    with db.reading() as session:
        return predict(session, request)


@router.post("/plans", response_model=Plan)
def post_plan(request: PlanRequest, _reader: Reader, _turn: HeavyTurn, db: DatabaseDep) -> Response:
    """How many devices of each candidate reach the target and hold the model, how long a training
    job takes, and what owning (or renting) them costs over the period: ranked by the objective,
    the rejected ones with their reasons, every assumption listed."""
    with db.reading() as session:
        answer = plan(session, request)
    return Response(answer.model_dump_json(), media_type="application/json")


@router.post("/plans/serving", response_model=ServingPlan)
def post_serving_plan(request: ServingRequest, _reader: Reader, _turn: HeavyTurn, db: DatabaseDep) -> Response:
    """Serving a language model (a preset or a custom shape): per part and precision, the devices that
    hold the weights and KV cache (tensor parallel where one is not enough) and carry the load within
    the TTFT and TPOT SLOs, with tokens/s, tokens per joule and dollars per million tokens; the parts
    that cannot, with the memory figures."""
    with db.reading() as session:
        answer = serving.plan(session, request)
    return Response(answer.model_dump_json(), media_type="application/json")
