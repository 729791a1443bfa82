/* Draw the book's compact plotly figures (lmgeometry.report.figures.encode_figure).
 *
 * lmgFigure(id, spec) draws a figure when it comes within a screen of the viewport
 * (lmgDrawAll() draws every one, as before printing). It decodes {"$f4"|"$i1"|"$i2"|"$i4":
 * base64, "shape"} and {"$q2": base64, "lo", "hi"} into typed arrays (with "parts": a list of
 * arrays sent as one; 2-D arrays into arrays of rows), {"$b": base64, "n"} into an array of n
 * booleans (packed bits), {"$ref": i} into spec.shared[i], {"$page": key} into a list that an
 * earlier figure of the page defined in its spec.page (figures.share_on_page), restores
 * plotly's default template (lmgFigure.template, appended by the Sphinx extension) and calls
 * Plotly.newPlot. Below PHONE_PX of width the legend moves under the plot (above it when a
 * slider is under it) and the side margins narrow; both come back when the page widens.
 * A figure whose layout.meta.legendClick is "gray-context" answers a click on a legend entry
 * by showing that category in colour over every other point in gray (seed 000's gray
 * shadow), instead of hiding it; a second click on the same entry restores the colours. A
 * figure whose layout.meta.menu is "select" gets its first dropdown as a native <select>
 * above the plot (a long word list fits any screen, and typing a word's first letters picks
 * it); plotly's own menu is hidden.
 */
(function () {
  "use strict";
  var PHONE_PX = 600;
  var PAGE = {};  // lists shared by the figures of the page: defined once, in spec.page

  var ARRAYS = {f4: Float32Array, i1: Int8Array, i2: Int16Array, i4: Int32Array,
                q2: Int16Array};

  function typed(spec, kind) {
    var bytes = Uint8Array.from(atob(spec["$" + kind]), function (c) { return c.charCodeAt(0); });
    var flat = new ARRAYS[kind](bytes.buffer);
    if (kind === "q2") {  // 16-bit steps over [lo, hi]
      var values = new Float32Array(flat.length), step = (spec.hi - spec.lo) / 65535;
      for (var i = 0; i < flat.length; i++) values[i] = spec.lo + (flat[i] + 32768) * step;
      flat = values;
    }
    if (spec.parts) {  // a list of arrays sent as one: split it again
      var out = [], start = 0;
      spec.parts.forEach(function (n) { out.push(flat.subarray(start, start + n)); start += n; });
      return out;
    }
    if (!spec.shape || spec.shape.length < 2) return flat;
    var rows = [], n = spec.shape[1];
    for (var r = 0; r < spec.shape[0]; r++) rows.push(Array.from(flat.subarray(r * n, (r + 1) * n)));
    return rows;
  }

  function decode(value, shared) {
    if (Array.isArray(value)) return value.map(function (v) { return decode(v, shared); });
    if (value === null || typeof value !== "object") return value;
    if ("$ref" in value) return shared[value.$ref];
    if ("$page" in value) return PAGE[value.$page];
    if ("$b" in value) {  // booleans as packed bits, most significant bit first
      var packed = atob(value.$b), flags = new Array(value.n);
      for (var b = 0; b < value.n; b++) flags[b] = ((packed.charCodeAt(b >> 3) >> (7 - (b & 7))) & 1) === 1;
      return flags;
    }
    for (var kind in ARRAYS) if (("$" + kind) in value) return typed(value, kind);
    var out = {};
    Object.keys(value).forEach(function (k) { out[k] = decode(value[k], shared); });
    return out;
  }

  // Below PHONE_PX: the legend under the plot (above it in a figure with a slider) and
  // narrow side margins (plotly's default is
  // 80 px a side, half of a phone); back to the figure's own layout when the page widens.
  function fitPhone(gd) {
    var layout = gd.layout || {};
    var narrow = gd.clientWidth < PHONE_PX;
    if (narrow === !!gd._lmgNarrow) return;
    gd._lmgNarrow = narrow;
    var margin = layout.margin || {};
    if (!gd._lmgWide) {
      gd._lmgWide = {legend: JSON.parse(JSON.stringify(layout.legend || {})),
                     l: margin.l, r: margin.r, t: margin.t};
    }
    var wide = gd._lmgWide, legend = wide.legend, update;
    if (narrow) {
      update = {"margin.l": Math.min(wide.l === undefined ? 80 : wide.l, 40),
                "margin.r": Math.min(wide.r === undefined ? 80 : wide.r, 10)};
      if (layout.showlegend !== false && gd.data && gd.data.length > 1) {
        // under the plot, or above it where a slider takes the space under it
        var above = (layout.sliders || []).length > 0;
        update["legend.orientation"] = "h";
        update["legend.x"] = 0;
        update["legend.xanchor"] = "left";
        update["legend.y"] = above ? 1.02 : -0.08;
        update["legend.yanchor"] = above ? "bottom" : "top";
        if (above) update["margin.t"] = (wide.t === undefined ? 100 : wide.t) + 30;  // toolbar
      }
    } else {  // null: back to plotly's default where the figure set nothing
      var own = function (v) { return v === undefined ? null : v; };
      update = {"margin.l": own(wide.l), "margin.r": own(wide.r), "margin.t": own(wide.t),
                "legend.orientation": own(legend.orientation), "legend.x": own(legend.x),
                "legend.xanchor": own(legend.xanchor), "legend.y": own(legend.y),
                "legend.yanchor": own(legend.yanchor)};
    }
    Plotly.relayout(gd, update);
  }

  var CONTEXT_GRAY = "#c8c8c8";

  // Legend clicks that keep the other categories as gray context (traces are grouped by
  // legendgroup, one group per category, across every panel or scene of the figure).
  function grayContext(gd) {
    var own = gd.data.map(function (t) { return t.marker ? t.marker.color : undefined; });
    var shown = null;
    function highlight(group) {
      shown = group === shown ? null : group;
      var keep = gd.data.map(function (t) { return shown === null || t.legendgroup === shown; });
      Plotly.restyle(gd, {
        "marker.color": own.map(function (c, i) { return keep[i] ? c : CONTEXT_GRAY; }),
        "marker.opacity": keep.map(function (k) { return k ? 1 : 0.35; })
      });
      gd._lmgHighlighted = shown;
      return false;  // plotly's own toggle would hide the category
    }
    gd.on("plotly_legendclick", function (ev) {
      return highlight(ev.data[ev.curveNumber].legendgroup);
    });
    gd.on("plotly_legenddoubleclick", function () { return false; });
  }

  // The first updatemenu as a <select> above the figure, applying the same update.
  function selectMenu(gd) {
    var menu = (gd.layout.updatemenus || [])[0];
    if (!menu || !menu.buttons) return null;
    var label = document.createElement("label");
    label.className = "lmg-menu";
    label.textContent = (menu.name || "show") + " ";
    var select = document.createElement("select");
    menu.buttons.forEach(function (b, k) { select.add(new Option(String(b.label), String(k))); });
    select.value = String(menu.active || 0);
    select.addEventListener("change", function () {
      var b = menu.buttons[Number(select.value)];
      if (b.method === "update") Plotly.update(gd, b.args[0], b.args[1]);
      else if (b.method === "restyle") Plotly.restyle(gd, b.args[0]);
      else if (b.method === "relayout") Plotly.relayout(gd, b.args[0]);
    });
    label.appendChild(select);
    gd.parentNode.insertBefore(label, gd);
    var top = (gd.layout.margin || {}).t;  // the room the menu had goes to the plot
    return Plotly.relayout(gd, {"updatemenus[0].visible": false,
                                "margin.t": Math.min(top === undefined ? 100 : top, 40)});
  }

  // Figures are drawn when they come within a screen of the viewport, so that a page of two
  // dozen figures is usable once its first screen is drawn; all of them before printing.
  var observer = window.IntersectionObserver ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) { if (e.isIntersecting) drawNow(e.target); });
  }, {rootMargin: "100% 0px"}) : null;

  function drawNow(gd) {
    var draw = gd._lmgDraw;
    if (!draw) return;
    gd._lmgDraw = null;
    if (observer) observer.unobserve(gd);
    draw();
  }

  window.lmgDrawAll = function () {
    document.querySelectorAll("div.plotly-graph-div").forEach(drawNow);
  };
  window.addEventListener("beforeprint", window.lmgDrawAll);

  function draw(gd, spec) {
    var shared = spec.shared.map(function (v) { return decode(v, []); });
    var layout = decode(spec.layout, shared);
    if (layout.$template) {
      delete layout.$template;
      if (window.lmgFigure.template) layout.template = window.lmgFigure.template;
    }
    var config = {displaylogo: false, responsive: true};
    var data = decode(spec.data, shared).map(function (trace) {
      return Object.assign({}, spec.common || {}, trace);  // properties every trace shares
    });
    var figure = {data: data, layout: layout, config: config};
    if (spec.frames) figure.frames = decode(spec.frames, shared);
    Plotly.newPlot(gd, figure).then(function () {
      var meta = layout.meta || {};
      if (meta.legendClick === "gray-context") grayContext(gd);
      return meta.menu === "select" ? selectMenu(gd) : null;
    }).then(function () {
      fitPhone(gd);
      window.addEventListener("resize", function () { fitPhone(gd); });
    });
  }

  window.lmgFigure = function (id, spec) {
    // lists shared with later figures are kept now, whichever figure is drawn first
    Object.keys(spec.page || {}).forEach(function (k) { PAGE[k] = spec.page[k]; });
    var gd = document.getElementById(id);
    gd._lmgDraw = function () { draw(gd, spec); };
    if (observer) observer.observe(gd);
    else drawNow(gd);
  };
})();
