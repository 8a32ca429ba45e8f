// Chart.js wrappers. Chart.js itself (window.Chart) is installed from npm by ./scripts/setup and
// loaded by index.html before the modules run. The shell destroys every chart when the page changes.

import { h } from "./dom.js";

export const COLORS = ["#2457c5", "#e8590c", "#2f9e44", "#ae3ec9", "#1098ad", "#f59f00", "#c92a2a", "#5c7cfa", "#868e96"];

const live = [];

export function chart(canvas, config) {
  // no animation: a chart shows its numbers at once (and a screenshot never catches bars half grown)
  window.Chart.defaults.animation = false;
  const instance = new window.Chart(canvas, config);
  live.push(instance);
  return instance;
}

export function destroyCharts() {
  for (const instance of live.splice(0)) instance.destroy();
}

/** A card with a title and a canvas; {box, canvas}. */
export function chartBox(title, tall) {
  const canvas = h("canvas", {});
  const box = h("div", { class: "card" }, h("h2", { text: title }), h("div", { class: "chart" + (tall ? " tall" : "") }, canvas));
  return { box, canvas };
}

/** Instead of a chart, a line saying why there is none. */
export function noChart(box, message) {
  box.querySelector(".chart").replaceWith(h("p", { class: "muted", text: message }));
}

/** A Chart.js plug-in drawing a vertical band per point from dataset.bands[j] = [low, high]. */
export const errorBars = {
  id: "errorBars",
  afterDatasetsDraw(instance) {
    const { ctx } = instance;
    instance.data.datasets.forEach((dataset, i) => {
      if (!dataset.bands) return;
      const meta = instance.getDatasetMeta(i);
      ctx.save();
      ctx.strokeStyle = dataset.borderColor;
      meta.data.forEach((point, j) => {
        const [low, high] = dataset.bands[j];
        const y = instance.scales.y;
        ctx.beginPath();
        ctx.moveTo(point.x, y.getPixelForValue(low));
        ctx.lineTo(point.x, y.getPixelForValue(high));
        ctx.stroke();
      });
      ctx.restore();
    });
  },
};
