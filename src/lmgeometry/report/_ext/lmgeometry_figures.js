/* Draw the book's compact plotly figures (lmgeometry.report.figures.encode_figure).
 *
 * lmgFigure(id, spec) draws a figure when it comes within a screen of the viewport
 * (lmgDrawAll() draws every one, as before printing). It decodes {"$f4"|"$i1"|"$i2"|"$i4":
 * base64, "shape"} and {"$q2": base64, "lo", "hi"} into typed arrays (with "parts": a list of
 * arrays sent as one; 2-D arrays into arrays of rows), {"$b": base64, "n"} into an array of n
 * booleans (packed bits), {"$ref": i} into spec.shared[i], {"$page": key} into a list that an
 * earlier figure of the page defined in its spec.page (figure_encoding.share_on_page). A large
 * figure comes as {"$gz": base64 of its gzip-compressed JSON} (figure_encoding.pack_spec): the
 * figures are unpacked one after the other in page order (DecompressionStream), so that a
 * list an earlier figure defines is known before a later one needs it. The decoder restores
 * plotly's default template (lmgFigure.template, appended by the Sphinx extension) and calls
 * Plotly.newPlot. Below PHONE_PX of width the figure is laid out for a phone at display time
 * (fitPhone: narrow margins, a grid of panels in fewer columns with titles that fit, the
 * legend under the x-axis titles, colour bars horizontal inside the width); the stored
 * figure is untouched and its own layout comes back when the page widens. Each figure's
 * div carries data-lmg-layout="phone" or "wide" once laid out.
 * A figure whose layout.meta.legendClick is "gray-context" answers a click on a legend entry
 * by showing that category in colour over every other point in gray (seed 000's gray
 * shadow), instead of hiding it; a second click on the same entry restores the colours. A
 * figure whose layout.meta.menu is "select" gets its first dropdown as a native <select>
 * above the plot (a long word list fits any screen, and typing a word's first letters picks
 * it); plotly's own menu is hidden.
 * Outside the book (a notebook's first figure carries this file and plotly.js packed,
 * report/figure_fallback.py) a figure waits for window.lmgPlotlyReady before drawing.
 */
(function () {
  "use strict";
  var PHONE_PX = 600;
  var PAGE = {};  // lists shared by the figures of the page: defined once, in spec.page
  // Figures are unpacked in page order, one after the other (a packed figure takes a moment);
  // each waits for those before it, whose shared lists it may use.
  var queue = Promise.resolve();

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

  // Below PHONE_PX of width a figure is laid out for a phone at display time (the stored
  // figure stays as it is, and comes back when the page widens):
  //  - narrow side margins (plotly's default is 80 px a side, half of a phone);
  //  - a grid of panels (subplots, 3-D scenes) keeps as many columns as leave each panel
  //    MIN_PANEL_PX and its title a font of MIN_TITLE_FONT px or more (titles shrink to
  //    fit); with fewer columns the panels are stacked row by row and the figure grows;
  //  - the legend goes horizontal under everything else, the x-axis titles included
  //    (above the plot where a slider takes the space under it), its title on its own line;
  //  - a colour bar goes horizontal under the plot, inside the width.
  var MIN_PANEL_PX = 110;
  var PHONE_COLS = 2;  // small multiples on a phone: at most two columns of square-ish panels
  var MIN_TITLE_FONT = 11;

  function copy(value) {
    return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
  }
  function own(v) { return v === undefined ? null : v; }  // null: back to plotly's default

  // The figure's panels: the layout keys of their domains, their domains, their grid cells
  // (row-major order) and the index of the subplot-title annotation over each.
  function panelsOf(gd) {
    var full = gd._fullLayout, subplots = full._subplots || {}, panels = [];
    (subplots.cartesian || []).forEach(function (id) {
      var m = id.match(/^x(\d*)y(\d*)$/);
      if (!m) return;
      var xa = full["xaxis" + m[1]], ya = full["yaxis" + m[2]];
      if (!xa || !ya || xa.overlaying || ya.overlaying) return;
      panels.push({keys: ["xaxis" + m[1] + ".domain", "yaxis" + m[2] + ".domain"],
                   x: xa.domain.slice(), y: ya.domain.slice(),
                   xTitle: !!(xa.title && xa.title.text), xTicks: xa.showticklabels !== false});
    });
    (subplots.gl3d || []).forEach(function (id) {
      var d = full[id].domain;
      panels.push({keys: [id + ".domain.x", id + ".domain.y"], x: d.x.slice(), y: d.y.slice(),
                   xTitle: false, xTicks: false});
    });
    var key = function (v) { return Math.round(v * 1000); };
    var xs = [], ys = [];
    panels.forEach(function (p) {
      if (xs.indexOf(key(p.x[0])) < 0) xs.push(key(p.x[0]));
      if (ys.indexOf(key(p.y[1])) < 0) ys.push(key(p.y[1]));
    });
    xs.sort(function (a, b) { return a - b; });
    ys.sort(function (a, b) { return b - a; });
    panels.forEach(function (p) {
      p.col = xs.indexOf(key(p.x[0]));
      p.row = ys.indexOf(key(p.y[1]));
      p.title = -1;
      (gd.layout.annotations || []).forEach(function (a, i) {
        if (a.xref === "paper" && a.yref === "paper" && a.yanchor === "bottom" &&
            Math.abs(a.x - (p.x[0] + p.x[1]) / 2) < 0.002 && Math.abs(a.y - p.y[1]) < 0.002) {
          p.title = i;
        }
      });
    });
    panels.sort(function (a, b) { return a.row - b.row || a.col - b.col; });
    return {panels: panels, cols: xs.length, rows: ys.length};
  }

  // Width in px of the widest panel title as drawn now, and its font size.
  function titleWidth(gd, panels) {
    var widest = 0, font = 16;
    panels.forEach(function (p) {
      if (p.title < 0) return;
      var text = gd.querySelector('g.annotation[data-index="' + p.title + '"] text');
      if (text) widest = Math.max(widest, text.getBoundingClientRect().width);
      var a = gd._fullLayout.annotations[p.title];
      if (a && a.font && a.font.size) font = a.font.size;
    });
    return {width: widest, font: font};
  }

  // Columns and title font for a grid in `width` px: the most columns (up to the figure's)
  // whose panels are MIN_PANEL_PX wide or more and whose titles fit at MIN_TITLE_FONT or
  // more; a title's width gets 15% to spare for the longer titles a slider step may set.
  function gridFit(grid, titles, width, gap) {
    var need = titles.width * 1.15;
    for (var c = Math.min(grid.cols, PHONE_COLS); c >= 1; c--) {  // a phone: one or two
      var panel = (width - (c - 1) * gap) / c;
      var font = need > 0 ? Math.min(titles.font, Math.floor(titles.font * (panel - 4) / need))
                          : titles.font;
      if (c === 1 || (panel >= MIN_PANEL_PX && font >= MIN_TITLE_FONT)) {
        return {cols: c, panel: panel, font: Math.max(font, 9)};
      }
    }
  }

  // The relayout that puts the grid in `fit.cols` columns (only the title font when the
  // figure keeps its columns), and the figure's new height.
  function reflow(gd, grid, fit, gap) {
    var update = {}, size = gd._fullLayout._size, height = gd._fullLayout.height;
    grid.panels.forEach(function (p) {
      if (p.title >= 0 && fit.font < gd._fullLayout.annotations[p.title].font.size) {
        update["annotations[" + p.title + "].font.size"] = fit.font;
      }
    });
    var first = grid.panels[0], rowPx = (first.y[1] - first.y[0]) * size.h;
    // the same columns, and panels no taller than wide: nothing to lay out again (panels
    // much taller than wide, as two columns of a desktop grid on a phone, get square rows)
    if (fit.cols === grid.cols && rowPx <= 1.25 * fit.panel) return {update: update, height: height};
    var lines = 1;
    grid.panels.forEach(function (p) {
      if (p.title >= 0) {
        lines = Math.max(lines, String(gd.layout.annotations[p.title].text).split("<br>").length);
      }
    });
    var xTitle = grid.panels.some(function (p) { return p.xTitle; });
    var xTicks = grid.panels.some(function (p) { return p.xTicks; });
    var vgap = lines * fit.font * 1.3 + 12 + (xTitle ? 32 : 0) + (xTicks ? 18 : 0);
    var rowH = Math.min(rowPx, Math.max(fit.panel, 160));
    var rows = Math.ceil(grid.panels.length / fit.cols);
    var plotH = rows * rowH + (rows - 1) * vgap;
    grid.panels.forEach(function (p, k) {
      var r = Math.floor(k / fit.cols), c = k % fit.cols;
      var x0 = c * (fit.panel + gap) / size.w, x1 = Math.min(1, x0 + fit.panel / size.w);
      var top = 1 - r * (rowH + vgap) / plotH, bottom = Math.max(0, top - rowH / plotH);
      update[p.keys[0]] = [x0, x1];
      update[p.keys[1]] = [bottom, top];
      if (p.title >= 0) {
        update["annotations[" + p.title + "].x"] = (x0 + x1) / 2;
        update["annotations[" + p.title + "].y"] = top;
      }
    });
    height = Math.round(plotH + size.t + size.b);
    update.height = height;
    return {update: update, height: height};
  }

  // The figure's own layout, kept before the first phone layout to come back to.
  function wideLayout(gd) {
    var layout = gd.layout, margin = layout.margin || {};
    var grid = panelsOf(gd), annotations = layout.annotations || [];
    return {
      legend: copy(layout.legend || {}), l: margin.l, r: margin.r, t: margin.t, b: margin.b,
      height: layout.height, styleHeight: gd.style.height,
      domains: grid.panels.map(function (p) { return {keys: p.keys, x: p.x, y: p.y}; }),
      titles: grid.panels.filter(function (p) { return p.title >= 0; }).map(function (p) {
        var a = annotations[p.title];
        return {i: p.title, x: a.x, y: a.y, size: a.font ? a.font.size : undefined};
      })
    };
  }

  // A figure drawn on a phone without a legend gets its colour bars horizontal at the foot
  // of the figure, inside the width (before Plotly.newPlot: plotly moves a bar that a later
  // restyle sends to the foot of the figure to its top); they stay so if the page widens.
  function phoneBars(data, layout) {
    var legend = layout.showlegend === true || (layout.showlegend !== false && data.some(
      function (t) { return t.showlegend === true || (data.length > 1 && t.showlegend !== false &&
                                                      t.type !== "heatmap"); }));
    if (legend) return false;
    function bar(own) {
      own = own || {};
      var title = own.title === undefined ? {} :
        (typeof own.title === "string" ? {text: own.title} : own.title);
      return Object.assign({}, own, {orientation: "h", x: 0.5, xanchor: "center",
                                     xref: "container", y: 0, yanchor: "bottom",
                                     yref: "container", len: 0.9, thickness: 10,
                                     title: Object.assign({}, title, {side: "top"})});
    }
    var moved = false;
    data.forEach(function (t) {
      if (t.marker && t.marker.showscale && !t.marker.coloraxis) {
        t.marker = Object.assign({}, t.marker, {colorbar: bar(t.marker.colorbar)});
        moved = true;
      } else if (t.type === "heatmap" && t.showscale !== false && !t.coloraxis) {
        t.colorbar = bar(t.colorbar);
        moved = true;
      }
    });
    Object.keys(layout).forEach(function (k) {
      if (/^coloraxis\d*$/.test(k) && layout[k].showscale !== false) {
        layout[k] = Object.assign({}, layout[k], {colorbar: bar(layout[k].colorbar)});
        moved = true;
      }
    });
    return moved;
  }

  // The foot colour bars under everything else: the figure grows by what they overlap.
  function clearBars(gd) {
    var top = Infinity;
    gd.querySelectorAll("g.colorbar text, g.colorbar rect.cbfill").forEach(function (el) {
      var box = el.getBoundingClientRect();
      if (box.height > 0) top = Math.min(top, box.top);
    });
    var grow = Math.ceil(contentBottom(gd, true) + 6 - top);
    if (!(grow > 0) || top === Infinity) return null;
    gd.style.height = (gd._fullLayout.height + grow) + "px";
    return Plotly.relayout(gd, {"margin.b": gd._fullLayout._size.b + grow,
                                height: gd._fullLayout.height + grow});
  }

  // Everything the legend must clear: the axis titles and tick labels, sliders, colour bars.
  function contentBottom(gd, barsLeftOut) {
    var bottom = -Infinity;
    gd.querySelectorAll("text, g.slider-container, g.colorbar").forEach(function (el) {
      var cls = el.getAttribute("class") || "";
      if (/^[xy]\d*title$/.test(cls) || el.closest("g.xtick, g[class$='tick']") ||
          /slider-container|colorbar/.test(cls)) {
        if (el.closest("g.legend") || (barsLeftOut && el.closest("g.colorbar"))) return;
        var box = el.getBoundingClientRect();
        if (box.height > 0) bottom = Math.max(bottom, box.bottom);
      }
    });
    return bottom;
  }

  function setHeight(gd, height) {
    gd.style.height = height + "px";
    return Plotly.relayout(gd, {height: height});
  }

  // The legend clear of the plot: under everything else (above the plot with a slider).
  function clearLegend(gd, above) {
    var legend = gd.querySelector("g.legend");
    if (!legend) return null;
    var box = legend.getBoundingClientRect(), full = gd._fullLayout, size = full._size;
    var svg = gd.querySelector(".main-svg").getBoundingClientRect();
    if (above) {  // room for the legend and the toolbar over the plot area
      var need = Math.ceil(box.height + 40);
      if (size.t >= need) return null;
      return Plotly.relayout(gd, {"margin.t": need, height: full.height + need - size.t})
        .then(function () { gd.style.height = gd._fullLayout.height + "px"; });
    }
    var overlap = Math.ceil(contentBottom(gd) + 8 - box.top);
    if (overlap <= 0) return null;
    var b = size.b + overlap;
    return Plotly.relayout(gd, {"margin.b": b, height: full.height + overlap})
      .then(function () { gd.style.height = gd._fullLayout.height + "px"; });
  }

  // Legend entries in as many equal columns as the widest entry leaves room for, where
  // plotly's own columns run past the right edge.
  function legendInside(gd) {
    var legend = gd.querySelector("g.legend");
    if (!legend) return null;
    var right = gd.querySelector(".main-svg").getBoundingClientRect().right;
    if (legend.getBoundingClientRect().right <= right + 1) return null;
    var widest = 0;
    legend.querySelectorAll("g.traces").forEach(function (el) {
      widest = Math.max(widest, el.getBoundingClientRect().width);
    });
    var columns = Math.max(1, Math.floor(gd._fullLayout._size.w / (widest + 8)));
    return Plotly.relayout(gd, {"legend.entrywidthmode": "fraction",
                                "legend.entrywidth": 1 / columns});
  }

  function narrowLayout(gd, wide) {
    var layout = gd.layout;
    var update = {"margin.l": Math.min(wide.l === undefined ? 80 : wide.l, 40),
                  "margin.r": Math.min(wide.r === undefined ? 80 : wide.r, 10)};
    var legend = layout.showlegend !== false && gd.data && gd.data.length > 1;
    var above = (layout.sliders || []).length > 0;
    if (legend) {
      update["legend.orientation"] = "h";
      update["legend.x"] = 0;
      update["legend.xanchor"] = "left";
      update["legend.xref"] = above ? "paper" : "container";
      update["legend.title.side"] = "top";
      update["legend.y"] = above ? 1.02 : 0;
      update["legend.yanchor"] = "bottom";
      update["legend.yref"] = above ? "paper" : "container";
    }
    return Plotly.relayout(gd, update).then(function () {
      var grid = panelsOf(gd);
      if (grid.cols < 2) return null;
      var gap = Math.max(10, (grid.panels[1].x[0] - grid.panels[0].x[1]) * gd._fullLayout._size.w);
      var fit = gridFit(grid, titleWidth(gd, grid.panels), gd._fullLayout._size.w, gap);
      var step = reflow(gd, grid, fit, gap);
      gd.style.height = step.height + "px";
      return Plotly.relayout(gd, step.update);
    }).then(function () {
      return gd._lmgBars ? clearBars(gd) : null;
    }).then(function () {
      return legend ? legendInside(gd) : null;
    }).then(function () {
      return legend ? clearLegend(gd, above) : null;
    });
  }

  function wideBack(gd, wide) {
    var legend = wide.legend, title = legend.title || {};
    var update = {"margin.l": own(wide.l), "margin.r": own(wide.r), "margin.t": own(wide.t),
                  "margin.b": own(wide.b), height: own(wide.height),
                  "legend.orientation": own(legend.orientation), "legend.x": own(legend.x),
                  "legend.xanchor": own(legend.xanchor), "legend.y": own(legend.y),
                  "legend.yanchor": own(legend.yanchor), "legend.xref": own(legend.xref),
                  "legend.yref": own(legend.yref), "legend.title.side": own(title.side),
                  "legend.entrywidthmode": own(legend.entrywidthmode),
                  "legend.entrywidth": own(legend.entrywidth)};
    wide.domains.forEach(function (d) {
      update[d.keys[0]] = d.x;
      update[d.keys[1]] = d.y;
    });
    wide.titles.forEach(function (a) {
      update["annotations[" + a.i + "].x"] = a.x;
      update["annotations[" + a.i + "].y"] = a.y;
      update["annotations[" + a.i + "].font.size"] = own(a.size);
    });
    gd.style.height = wide.styleHeight;
    return Plotly.relayout(gd, update);
  }

  function fitPhone(gd) {
    var narrow = gd.clientWidth < PHONE_PX;
    if (narrow === !!gd._lmgNarrow) return gd._lmgFitting || Promise.resolve();
    var previous = gd._lmgFitting || Promise.resolve();
    gd._lmgNarrow = narrow;
    gd._lmgFitting = previous.then(function () {
      if (!gd._lmgWide) gd._lmgWide = wideLayout(gd);
      return narrow ? narrowLayout(gd, gd._lmgWide) : wideBack(gd, gd._lmgWide);
    }).then(function () {
      gd.setAttribute("data-lmg-layout", narrow ? "phone" : "wide");
    });
    return gd._lmgFitting;
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

  // Every figure now, and those still being unpacked once they are (a promise of that).
  window.lmgDrawAll = function () {
    var all = function () { document.querySelectorAll("div.plotly-graph-div").forEach(drawNow); };
    all();
    return queue.then(all);
  };
  window.addEventListener("beforeprint", window.lmgDrawAll);

  function draw(gd, spec) {
    // Outside the book plotly.js may still be unpacking (report/figure_fallback.py)
    if (!window.Plotly && window.lmgPlotlyReady) {
      window.lmgPlotlyReady.then(function () { draw(gd, spec); });
      return;
    }
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
    gd._lmgBars = gd.clientWidth < PHONE_PX && phoneBars(data, layout);
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

  // base64 of gzip-compressed text -> a promise of the text (a packed figure's spec, and
  // outside the book plotly.js itself: report/figure_fallback.py)
  function gunzipText(packed) {
    var bytes = Uint8Array.from(atob(packed), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }
  window.lmgGunzipText = gunzipText;

  // A packed figure's spec: base64 -> gzip -> JSON (figure_encoding.pack_spec).
  function unpack(spec) {
    return spec.$gz ? gunzipText(spec.$gz).then(JSON.parse) : spec;
  }

  function ready(gd, spec) {
    // lists shared with later figures are kept now, whichever figure is drawn first
    Object.keys(spec.page || {}).forEach(function (k) { PAGE[k] = spec.page[k]; });
    gd._lmgDraw = function () { draw(gd, spec); };
    if (observer) observer.observe(gd);
    else drawNow(gd);
  }

  window.lmgFigure = function (id, spec) {
    var gd = document.getElementById(id);
    queue = queue.then(function () { return unpack(spec); }).then(function (full) {
      ready(gd, full);
    }).catch(function (error) {
      console.error("lmgFigure " + id + ": " + error);
    });
  };
})();
