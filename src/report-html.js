/*
 * report-html.js: draws the page of `vramtrace report --html` from the
 * JSON data in #vramtrace-data (HACKING.md, "The HTML report").
 *
 * Written here, with no library: the page needs a stacked area chart on a
 * canvas, bars in SVG and an icicle of positioned boxes, a few hundred
 * lines that a charting library would replace with a dependency of
 * hundreds of KB to inline, track and audit.  Plain ES2017, no build step,
 * nothing fetched.  The data is already aggregated in C (buckets, top
 * sites), so nothing here is slower than linear in the data.
 *
 * When everything is drawn, <html> gets data-ready="1", data-draw-ms
 * (milliseconds from navigation to the end of drawing) and data-script-ms
 * (the part this script took, parsing the data included); the tests wait
 * for the first and the benchmark reads the others.
 */
'use strict';
(function () {
	var start = performance.now();
	var D = JSON.parse(document.getElementById('vramtrace-data').
	    textContent);
	var STREAM_COLORS = ['#4e79a7', '#59a14f', '#edc948', '#b07aa1',
	    '#76b7b2', '#ff9da7', '#9c755f', '#bab0ac', '#f28e2b'];
	var GARBAGE_COLOR = '#e15759';
	var LAYER_COLORS = { segment: '#9c755f', pool: '#76b7b2',
	    block: '#4e79a7', host: '#edc948' };
	var LAYER_WORDS = { segment: 'segments (reserved)',
	    pool: 'pool allocations', block: 'blocks (allocated)',
	    host: 'pinned host memory' };
	var state = { layer: D.layer, group: 'stream', at: 0, zoom: null };

	function $(id) { return document.getElementById(id); }

	/* el('tag', {attr: v}, child...): children are nodes or text. */
	function el(tag, attrs) {
		var e = document.createElement(tag), k, i, c;

		for (k in attrs || {})
			if (attrs[k] !== null && attrs[k] !== undefined)
				e.setAttribute(k, attrs[k]);
		for (i = 2; i < arguments.length; i++) {
			c = arguments[i];
			if (c === null || c === undefined)
				continue;
			e.appendChild(typeof c === 'object' ? c :
			    document.createTextNode(String(c)));
		}
		return e;
	}

	/* Bytes as the command line prints them: "311.0 MiB". */
	function fmtBytes(b) {
		var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], v = Math.abs(b);
		var u = 0;

		while (v >= 1024 && u < 4) {
			v /= 1024;
			u++;
		}
		if (u === 0)
			return b + ' B';
		return (b < 0 ? '-' : '') + v.toFixed(1) + ' ' + units[u];
	}
	function fmtSigned(b) { return (b >= 0 ? '+' : '') + fmtBytes(b); }
	function fmtTime(ns) {
		if (ns === null)
			return 'n/a';
		if (ns >= 1e9)
			return (ns / 1e9).toFixed(3) + ' s';
		if (ns >= 1e6)
			return (ns / 1e6).toFixed(2) + ' ms';
		if (ns >= 1e3)
			return (ns / 1e3).toFixed(1) + ' \u00b5s';
		return Math.round(ns) + ' ns';
	}
	/* A stream as the CLI prints it: the id, and its handle when known. */
	function fmtStream(s, handle) {
		return s === null ? '?' : String(s) +
		    (handle ? ' (' + handle + ')' : '');
	}
	function fmtStep(k) { return k === null ? 'n/a' : 'step ' + k; }

	/* ", step k" after an instant; nothing in a run without steps. */
	function inStep(k) {
		return D.steps.length === 0 ? '' : ', ' + fmtStep(k);
	}

	/* The step an instant is in, as query_report_step_at says. */
	function stepAt(t) {
		var s = D.steps, lo = 0, hi = s.length, mid;

		if (s.length === 0)
			return null;
		while (lo < hi) {
			mid = (lo + hi) >> 1;
			if (s[mid][2] < t)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < s.length ? s[lo][0] : s[s.length - 1][0] + 1;
	}

	/*
	 * A verdict line's words as `vramtrace leaks` prints them: why it is
	 * INCONCLUSIVE, else the growth per step, how many steps grew and,
	 * for a leak of the device's memory, the stream that grows most.
	 */
	function verdictWords(v) {
		var words = v.verdict;

		if (v.verdict === 'INCONCLUSIVE')
			return words + ' (' + v.reason + ')';
		words += ', ' + fmtSigned(Math.round(v.growth_bytes_per_step)) +
		    ' per step, ' + Math.round(v.grew_fraction * 100) + '% of ' +
		    v.steps_analysed + ' steps grew';
		if (v.verdict === 'LEAK' && v.top_stream !== null &&
		    v.layer !== 'host')
			words += ', mostly on stream ' +
			    fmtStream(v.top_stream.stream) + ' (device ' +
			    v.top_stream.device + ')';
		return words;
	}

	/* The leak model's shape and projection, once it gives them. */
	function shapeLines(box, v, id) {
		if (v.shape !== null)
			box.appendChild(el('div', { id: id + 'shape' },
			    'shape: ' + v.shape + (v.period !== null &&
			    v.period > 1 ? ', every ' + v.period + ' steps' :
			    '') + (v.onset !== null ? ', from step ' + v.onset :
			    '')));
		if (v.projection !== null)
			box.appendChild(el('div', { id: id + 'projection' },
			    'projection: ' + fmtBytes(v.projection.bytes) +
			    ' after ' + v.projection.steps + ' steps'));
	}

	/*
	 * The pinned host memory's verdict, judged beside the device's as
	 * `vramtrace leaks` judges it, in a box of its own under the
	 * device's; the box stays hidden when it was not judged.
	 */
	function pinned() {
		var p = D.pinned, box = $('pinned');

		if (p === null)
			return;
		box.hidden = false;
		box.className = 'verdict ' + p.verdict.toLowerCase();
		box.setAttribute('data-verdict', p.verdict);
		box.appendChild(el('strong', null, 'pinned: ' +
		    verdictWords(p)));
		box.appendChild(el('span', null, ', layer ' + p.layer +
		    ' (pinned host memory)'));
		shapeLines(box, p, 'pinned-');
	}

	function header() {
		var r = D.run, v = D.verdict, f = $('facts');
		var box = $('verdict');
		var what = r.input || r.command || 'run ' + r.id;

		document.title = 'vramtrace: ' + what;
		$('run-title').textContent = what;
		function fact(term, value, attrs) {
			f.appendChild(el('dt', null, term));
			f.appendChild(el('dd', attrs || null, value));
		}
		fact('run', r.id + ', ' + (r.source || 'n/a') +
		    (r.complete ? '' : ' (not finished)'));
		fact('host', (r.host || 'n/a') + (r.duration_ns === null ? '' :
		    ', ' + fmtTime(r.duration_ns)));
		fact('devices', (r.devices === null ? 'n/a' : r.devices) +
		    ', ' + (r.processes === null ? 'n/a' : r.processes) +
		    ' processes, ' + (r.allocations === null ? 'n/a' :
		    r.allocations) + ' allocations, allocator ' +
		    (r.allocator || 'n/a'));
		fact('steps', D.steps.length === 0 ? 'none' :
		    v.bars.length > 0 ? v.bars[v.bars.length - 1][1] +
		    ' (from ' + (r.step_source || 'n/a') + ')' : 'n/a');
		fact('peak', D.peak.t === null ? 'n/a' :
		    fmtBytes(D.peak.bytes) + ' of ' + (D.layer === 'host' ?
		    LAYER_WORDS.host : D.layer + 's') + ' at ' +
		    fmtTime(D.peak.t) + inStep(D.peak.step),
		    { id: 'peak', 'data-bytes': D.peak.bytes,
		    'data-step': D.peak.step });
		fact('at a step end', v.peak_step_end.step === null ? 'n/a' :
		    fmtBytes(v.peak_step_end.bytes) + ' at the end of ' +
		    fmtStep(v.peak_step_end.step), { id: 'peak-step-end',
		    'data-bytes': v.peak_step_end.bytes });

		box.className = 'verdict ' + v.verdict.toLowerCase();
		box.setAttribute('data-verdict', v.verdict);
		box.appendChild(el('strong', null, verdictWords(v)));
		box.appendChild(el('span', null, ', layer ' + v.layer +
		    (D.steps.length === 0 ? '' : ', warm-up ' + v.warmup +
		    ' step' + (v.warmup === 1 ? '' : 's'))));
		if (v.history_from !== null)
			box.appendChild(el('div', { id: 'history' }, 'history: ' +
			    'the snapshot\'s trace begins in step ' +
			    v.history_from + ', so the warm-up reaches to it (' +
			    'PyTorch kept the last events only: a larger ' +
			    'max_entries sees every step)'));
		shapeLines(box, v, '');
		v.streams.forEach(function (s) {
			if (s.garbage !== null)
				box.appendChild(el('div', { 'class': 'garbage',
				    'data-stream': s.stream,
				    'data-garbage': s.garbage },
				    'garbage: stream ' + fmtStream(s.stream, s.handle) +
				    ' (device ' + s.device + ') is ' +
				    s.garbage + ', ' +
				    fmtBytes(s.garbage_bytes)));
		});
		$('footer').textContent = 'Made by ' + D.generator + ' (page ' +
		    'format ' + D.version + '). This file fetches nothing; ' +
		    'its data is in the script element #vramtrace-data.';
	}

	/* A lane's tracks: {layer: track}. */
	function tracksOf(lane) {
		var t = {};

		lane.tracks.forEach(function (k) { t[k.layer] = k; });
		return t;
	}

	/* What one lane chart stacks: [{name, color, garbage, values}]. */
	function layersOf(lane) {
		var t = tracksOf(lane), out = [], n = D.buckets;

		if (state.group === 'stream') {
			if (!t[state.layer])
				return out;
			t[state.layer].series.forEach(function (s, i) {
				out.push({ stream: s.stream,
				    name: 'stream ' + fmtStream(s.stream, s.handle),
				    garbage: s.garbage,
				    color: s.garbage !== null ? GARBAGE_COLOR :
				    STREAM_COLORS[i % STREAM_COLORS.length],
				    values: s.hi, peak: s.peak_bytes,
				    end: s.end_bytes });
			});
			return out;
		}
		/* Layers nest (blocks lie in segments): lines, not a stack. */
		lane.tracks.forEach(function (k) {
			var v = new Array(n), i;

			for (i = 0; i < n; i++)
				v[i] = k.series.reduce(function (a, s) {
					return a + s.hi[i];
				}, 0);
			out.push({ name: LAYER_WORDS[k.layer] || k.layer,
			    layer: k.layer, garbage: null, values: v,
			    color: LAYER_COLORS[k.layer] || '#888',
			    peak: k.peak.bytes, end: k.end_bytes });
		});
		return out;
	}

	function hatch(ctx, color) {
		var c = document.createElement('canvas'), g;

		c.width = c.height = 8;
		g = c.getContext('2d');
		g.fillStyle = color;
		g.globalAlpha = 0.45;
		g.fillRect(0, 0, 8, 8);
		g.globalAlpha = 1;
		g.strokeStyle = '#8b1a1a';
		g.lineWidth = 2;
		g.beginPath();
		g.moveTo(0, 8);
		g.lineTo(8, 0);
		g.stroke();
		return ctx.createPattern(c, 'repeat');
	}

	/* A canvas sized for its box and the screen's pixel ratio. */
	function sized(canvas, height) {
		var dpr = window.devicePixelRatio || 1;
		var w = canvas.parentNode.clientWidth || 800, ctx;

		canvas.style.width = w + 'px';
		canvas.style.height = height + 'px';
		canvas.width = Math.round(w * dpr);
		canvas.height = Math.round(height * dpr);
		ctx = canvas.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		return { ctx: ctx, w: w, h: height };
	}

	var PAD = { l: 70, r: 12, t: 14, b: 22 };

	function xOf(g, t) {
		return PAD.l + (g.w - PAD.l - PAD.r) * (D.span_ns > 0 ?
		    t / D.span_ns : 0);
	}

	function axes(g, max) {
		var c = g.ctx, i, y, t;

		c.fillStyle = '#555';
		c.strokeStyle = '#ddd';
		c.font = '11px sans-serif';
		c.textAlign = 'right';
		for (i = 0; i <= 4; i++) {
			y = g.h - PAD.b - (g.h - PAD.t - PAD.b) * i / 4;
			c.beginPath();
			c.moveTo(PAD.l, y);
			c.lineTo(g.w - PAD.r, y);
			c.stroke();
			c.fillText(fmtBytes(Math.round(max * i / 4)), PAD.l - 4,
			    y + 4);
		}
		c.textAlign = 'center';
		for (i = 0; i <= 5; i++) {
			t = D.span_ns * i / 5;
			c.fillText(fmtTime(t), Math.min(xOf(g, t), g.w - 30),
			    g.h - 6);
		}
	}

	/* Thin lines at the step ends, numbered where there is room. */
	function stepMarks(g) {
		var c = g.ctx, last = -1e9, x;

		c.strokeStyle = 'rgba(0,0,0,0.18)';
		c.fillStyle = '#777';
		c.textAlign = 'left';
		c.font = '10px sans-serif';
		D.steps.forEach(function (s) {
			x = xOf(g, s[2]);
			c.beginPath();
			c.moveTo(x, PAD.t);
			c.lineTo(x, g.h - PAD.b);
			c.stroke();
			if (x - last > 28) {
				c.fillText(String(s[0]), x + 2, PAD.t + 9);
				last = x;
			}
		});
	}

	function marker(g, t, bytes, max, label, color) {
		var c = g.ctx, x = xOf(g, t);
		var y = g.h - PAD.b - (g.h - PAD.t - PAD.b) * bytes / max;

		c.strokeStyle = color;
		c.setLineDash([4, 3]);
		c.beginPath();
		c.moveTo(x, PAD.t);
		c.lineTo(x, g.h - PAD.b);
		c.stroke();
		c.setLineDash([]);
		c.fillStyle = color;
		c.beginPath();
		c.moveTo(x, y);
		c.lineTo(x - 5, y - 8);
		c.lineTo(x + 5, y - 8);
		c.fill();
		c.font = 'bold 11px sans-serif';
		c.textAlign = x > g.w - 160 ? 'right' : 'left';
		c.fillText(label, x + (c.textAlign === 'left' ? 7 : -7),
		    Math.max(y - 2, PAD.t + 22));
	}

	function drawLane(box, lane) {
		var g = sized(box.querySelector('canvas.chart'), 240);
		var c = g.ctx, layers = layersOf(lane), n = D.buckets;
		var stack = state.group === 'stream', base = new Array(n);
		var max = 1, i, tot, k = tracksOf(lane)[state.layer];
		var ph = g.h - PAD.t - PAD.b, pw = g.w - PAD.l - PAD.r;

		for (i = 0; i < n; i++) {
			base[i] = 0;
			tot = 0;
			layers.forEach(function (s) {
				tot = stack ? tot + s.values[i] :
				    Math.max(tot, s.values[i]);
			});
			max = Math.max(max, tot);
		}
		axes(g, max);
		function y(v) { return g.h - PAD.b - ph * v / max; }
		function x(b) { return PAD.l + pw * b / n; }
		/* The edge of a step function, points only where it changes. */
		function edge(v, forward) {
			var i, j, at, prev = null;

			for (j = 0; j < n; j++) {
				i = forward ? j : n - 1 - j;
				if (v[i] === prev)
					continue;
				at = x(forward ? i : i + 1);
				if (prev !== null)
					c.lineTo(at, y(prev));
				c.lineTo(at, y(v[i]));
				prev = v[i];
			}
			c.lineTo(x(forward ? n : 0), y(prev));
		}
		layers.forEach(function (s) {
			var top = new Array(n);

			for (i = 0; i < n; i++)
				top[i] = (stack ? base[i] : 0) + s.values[i];
			c.beginPath();
			c.moveTo(x(0), y(stack ? base[0] : 0));
			edge(top, true);
			if (stack)
				edge(base, false);
			else
				c.lineTo(x(0), y(0));
			c.closePath();
			c.fillStyle = s.garbage !== null ? hatch(c, s.color) :
			    s.color;
			c.globalAlpha = stack ? 0.85 : 0.3;
			c.fill();
			c.globalAlpha = 1;
			c.strokeStyle = s.color;
			c.stroke();
			if (stack)
				base = top;
		});
		stepMarks(g);
		if (k && k.peak.t !== null)
			marker(g, k.peak.t, k.peak.bytes, max, 'peak ' +
			    fmtBytes(k.peak.bytes), '#b22222');
		lane.drawn = { layers: layers, max: max };
		if (lane.copies || lane.offload)
			drawOffload(box.querySelector('canvas.offload'), lane);
	}

	/* Copies out (up) and in (down) per bucket; the stash as a line. */
	function drawOffload(canvas, lane) {
		var g = sized(canvas, 90), c = g.ctx, n = D.buckets, i;
		var out = lane.copies ? lane.copies.out : null;
		var inn = lane.copies ? lane.copies.in : null;
		var o = lane.offload, max = 1, smax = 1, mid = g.h / 2;
		var pw = g.w - PAD.l - PAD.r, bw = Math.max(1, pw / n);

		for (i = 0; i < n; i++) {
			max = Math.max(max, out ? out[i] : 0, inn ? inn[i] : 0,
			    o ? o.offloaded[i] : 0, o ? o.prefetched[i] : 0);
			smax = Math.max(smax, o ? o.stash[i] : 0);
		}
		c.strokeStyle = '#ccc';
		c.beginPath();
		c.moveTo(PAD.l, mid);
		c.lineTo(g.w - PAD.r, mid);
		c.stroke();
		c.font = '10px sans-serif';
		c.fillStyle = '#555';
		c.textAlign = 'right';
		c.fillText('out \u2191', PAD.l - 4, 14);
		c.fillText('in \u2193', PAD.l - 4, g.h - 6);
		for (i = 0; i < n; i++) {
			var up = Math.max(out ? out[i] : 0,
			    o ? o.offloaded[i] : 0);
			var down = Math.max(inn ? inn[i] : 0,
			    o ? o.prefetched[i] : 0);
			var x = PAD.l + pw * i / n;

			c.fillStyle = '#f28e2b';
			c.fillRect(x, mid - (mid - 4) * up / max, bw,
			    (mid - 4) * up / max);
			c.fillStyle = '#76b7b2';
			c.fillRect(x, mid, bw, (mid - 4) * down / max);
		}
		if (o) {
			c.strokeStyle = '#7b3294';
			c.lineWidth = 1.5;
			c.beginPath();
			for (i = 0; i < n; i++)
				c.lineTo(PAD.l + pw * (i + 0.5) / n,
				    g.h - 4 - (g.h - 8) * o.stash[i] / smax);
			c.stroke();
			c.lineWidth = 1;
		}
		canvas.title = 'copies out (up) and in (down), at most ' +
		    fmtBytes(max) + ' in a bucket' + (o ? '; the line: bytes ' +
		    'the offload stashes hold, at most ' + fmtBytes(smax) : '');
	}

	function legend(ul, lane) {
		ul.textContent = '';
		layersOf(lane).forEach(function (s) {
			var li = el('li', { 'class': 'series' +
			    (s.garbage !== null ? ' garbage' : ''),
			    'data-stream': s.stream, 'data-layer': s.layer,
			    'data-garbage': s.garbage },
			    el('span', { 'class': 'swatch', style:
			    'background:' + s.color }), s.name + ': peak ' +
			    fmtBytes(s.peak) + ', end ' + fmtBytes(s.end));

			if (s.garbage !== null)
				li.appendChild(el('em', null, ' garbage (' +
				    s.garbage + ')'));
			ul.appendChild(li);
		});
	}

	function tip(ev, lines) {
		var t = $('tip');

		t.textContent = '';
		lines.forEach(function (l) {
			t.appendChild(el('div', null, l));
		});
		t.hidden = false;
		t.style.left = Math.min(ev.pageX + 12,
		    document.documentElement.scrollWidth - 260) + 'px';
		t.style.top = ev.pageY + 12 + 'px';
	}

	function hover(ev, canvas, lane) {
		var r = canvas.getBoundingClientRect(), d = lane.drawn;
		var pw = r.width - PAD.l - PAD.r, n = D.buckets;
		var b = Math.floor((ev.clientX - r.left - PAD.l) / pw * n);
		var lines;

		if (!d || b < 0 || b >= n) {
			$('tip').hidden = true;
			return;
		}
		lines = [fmtTime(b * D.bucket_ns) + ' to ' +
		    fmtTime((b + 1) * D.bucket_ns) +
		    inStep(stepAt(b * D.bucket_ns))];
		d.layers.forEach(function (s) {
			lines.push(s.name + ': ' + fmtBytes(s.values[b]));
		});
		tip(ev, lines);
	}

	function lanes() {
		var box = $('lanes'), note = $('timeline-note'), sel;
		var layers = {};

		box.textContent = '';
		if (D.buckets === 0 || D.lanes.length === 0) {
			note.textContent = 'This run holds no allocation.';
			return;
		}
		D.lanes.forEach(function (l) {
			l.tracks.forEach(function (k) { layers[k.layer] = 1; });
		});
		sel = $('layer-select');
		sel.textContent = '';
		['block', 'pool', 'segment', 'host'].forEach(function (n) {
			if (layers[n])
				sel.appendChild(el('option', { value: n },
				    LAYER_WORDS[n]));
		});
		sel.value = state.layer;
		note.textContent = 'Each of the ' + D.buckets + ' buckets of ' +
		    fmtTime(D.bucket_ns) + ' shows the moment of its highest ' +
		    'total; the peak is exact. The run\u2019s peak: ' +
		    fmtBytes(D.peak.bytes) + ' at ' + fmtTime(D.peak.t) + '.' +
		    (D.step_every > 1 ? ' One step mark in ' + D.step_every +
		    '.' : '');
		D.lanes.forEach(function (lane, i) {
			var k = tracksOf(lane)[D.layer];
			var div = el('div', { 'class': 'lane', 'data-lane': i,
			    'data-rank': lane.rank },
			    el('h3', null, lane.label, el('span', {
			    'class': 'lane-peak', 'data-bytes': k ?
			    k.peak.bytes : null }, k ? ' \u2014 peak ' +
			    fmtBytes(k.peak.bytes) + ' at ' +
			    fmtTime(k.peak.t) + inStep(k.peak.step) :
			    '')),
			    el('canvas', { 'class': 'chart' }));
			var canvas = div.querySelector('canvas.chart');

			if (lane.copies || lane.offload)
				div.appendChild(el('canvas', {
				    'class': 'offload' }));
			div.appendChild(el('ul', { 'class': 'legend' }));
			box.appendChild(div);
			canvas.addEventListener('mousemove', function (ev) {
				hover(ev, canvas, lane);
			});
			canvas.addEventListener('mouseleave', function () {
				$('tip').hidden = true;
			});
		});
		redraw();
	}

	function redraw() {
		var divs = document.querySelectorAll('#lanes .lane');

		D.lanes.forEach(function (lane, i) {
			drawLane(divs[i], lane);
			legend(divs[i].querySelector('ul.legend'), lane);
		});
	}

	/* Growth bars: the change of live bytes over each step (or group). */
	function growth() {
		var v = D.verdict, bars = v.bars, box = $('growth-chart');
		var NS = 'http://www.w3.org/2000/svg', W = 1000, H = 220;
		var lo = 0, hi = 1, svg, bw, zero;

		box.textContent = '';
		if (bars.length === 0) {
			$('growth-note').textContent = 'No steps: no growth ' +
			    'to show.';
			return;
		}
		$('growth-note').textContent = 'The change of live ' + v.layer +
		    ' bytes over each ' + (bars[0][1] > bars[0][0] ?
		    'group of ' + (bars[0][1] - bars[0][0] + 1) + ' steps' :
		    'step') + '; grey: the warm-up, left out of the verdict.';
		function s(tag, attrs) {
			var e = document.createElementNS(NS, tag), k;

			for (k in attrs)
				e.setAttribute(k, attrs[k]);
			return e;
		}
		bars.forEach(function (b) {
			lo = Math.min(lo, b[2]);
			hi = Math.max(hi, b[2]);
		});
		svg = s('svg', { viewBox: '0 0 ' + W + ' ' + H,
		    'class': 'bars', role: 'img' });
		bw = (W - 80) / bars.length;
		zero = 10 + (H - 30) * hi / (hi - lo);
		function y(val) {
			return 10 + (H - 30) * (hi - val) / (hi - lo);
		}
		svg.appendChild(s('line', { x1: 70, x2: W, y1: zero, y2: zero,
		    'class': 'zero' }));
		[hi, lo].forEach(function (val) {
			var t = s('text', { x: 66, y: y(val) + 4,
			    'text-anchor': 'end' });

			t.textContent = fmtSigned(val);
			svg.appendChild(t);
		});
		bars.forEach(function (b, i) {
			var warm = b[1] <= v.warmup, r, t, lines;

			r = s('rect', { x: 75 + i * bw, width: Math.max(bw - 1,
			    0.5), y: Math.min(y(b[2]), zero),
			    height: Math.max(Math.abs(y(b[2]) - zero), 0.5),
			    'class': 'bar ' + (warm ? 'warm' : b[2] > 0 ?
			    'up' : 'down'), 'data-step': b[1],
			    'data-delta': b[2] });
			lines = [(b[0] === b[1] ? 'step ' + b[0] : 'steps ' +
			    b[0] + '-' + b[1]) + ': ' + fmtSigned(b[2]) +
			    ', live ' + fmtBytes(b[3])];
			if (i > 0)
				v.streams.forEach(function (st) {
					lines.push('stream ' +
					    fmtStream(st.stream, st.handle) + ': ' +
					    fmtSigned(st.live[i] -
					    st.live[i - 1]));
				});
			t = s('title', {});
			t.textContent = lines.join('\n');
			r.appendChild(t);
			svg.appendChild(r);
			if (bars.length <= 40 || i % Math.ceil(bars.length /
			    40) === 0) {
				t = s('text', { x: 75 + (i + 0.5) * bw,
				    y: H - 4, 'text-anchor': 'middle' });
				t.textContent = String(b[1]);
				svg.appendChild(t);
			}
		});
		box.appendChild(svg);
	}

	/* The holders' icicle: a tree of frames, outermost at the top. */
	function tree(at) {
		var h = D.holders, root = { name: { text: 'all' }, value: 0,
		    kids: {}, sites: [], key: '' };

		h.sites.forEach(function (site, si) {
			var node = root, path, bytes = site.bytes[at];

			if (bytes <= 0)
				return;
			path = site.frames.length > 0 ? site.frames.map(
			    function (f) { return 'f' + f; }) :
			    [site.label === null ? 'none' : 'l' + si];
			root.value += bytes;
			path.forEach(function (p) {
				var k = node.kids[p];

				if (!k) {
					k = node.kids[p] = { value: 0,
					    key: node.key + '/' + p, kids: {},
					    sites: [],
					    name: frameName(p, site) };
				}
				k.value += bytes;
				node = k;
			});
			node.sites.push(si);
		});
		if (h.other_bytes[at] > 0) {
			root.kids.other = { key: '/other', value:
			    h.other_bytes[at], kids: {}, sites: [],
			    name: { text: h.other_sites[at] +
			    ' more sites (not in this page)' } };
			root.value += h.other_bytes[at];
		}
		return root;
	}

	function frameName(p, site) {
		var f;

		if (p === 'none')
			return { text: '(no stack)' };
		if (p.charAt(0) === 'l')
			return { text: site.label };
		f = D.holders.frames[+p.slice(1)];
		return { text: f[0], where: f[1] + ':' + f[2] };
	}

	function kids(node) {
		return Object.keys(node.kids).map(function (k) {
			return node.kids[k];
		}).sort(function (a, b) { return b.value - a.value; });
	}

	function holderTabs() {
		var box = $('holder-tabs'), h = D.holders;
		var names = ['At the peak', 'At the end'];

		box.textContent = '';
		names.forEach(function (n, at) {
			var total = h.sites.reduce(function (a, s) {
				return a + s.bytes[at];
			}, h.other_bytes[at]);
			var b = el('button', { type: 'button', 'data-at': at,
			    'class': at === state.at ? 'on' : null },
			    n + ' (' + fmtBytes(total) + (at === 0 &&
			    D.peak.t !== null ? ', ' + fmtTime(D.peak.t) +
			    inStep(D.peak.step) : '') + ')');

			b.addEventListener('click', function () {
				state.at = at;
				state.zoom = null;
				holderTabs();
				icicle();
			});
			box.appendChild(b);
		});
	}

	function icicle() {
		var box = $('icicle'), root = tree(state.at), top = root;
		var rows = 0;
		var W = box.clientWidth || 900, ROW = 20;

		box.textContent = '';
		$('blocks').textContent = '';
		$('holders-note').textContent = 'Live ' + D.layer +
		    ' bytes by the Python stack that allocated them, ' +
		    'outermost frame at the top; width is bytes. Click a ' +
		    'frame to zoom in and list its blocks (the ' +
		    D.holders.site_blocks + ' largest of each site are in ' +
		    'this page).';
		if (root.value === 0) {
			box.appendChild(el('p', null, 'Nothing is live here.'));
			return;
		}
		if (state.zoom !== null)
			top = find(root, state.zoom) || root;
		function place(node, x, w, d) {
			var div, label, list;

			if (w < 1)
				return;
			rows = Math.max(rows, d + 1);
			label = node.name.text + (node.name.where ? ' (' +
			    node.name.where + ')' : '');
			div = el('div', { 'class': 'frame' + (node === top &&
			    top !== root ? ' zoomed' : ''),
			    'data-key': node.key, 'data-bytes': node.value,
			    title: label + '\n' + fmtBytes(node.value) },
			    w > 40 ? node.name.text + ' ' +
			    fmtBytes(node.value) : '');
			div.style.left = x + 'px';
			div.style.width = Math.max(w - 1, 1) + 'px';
			div.style.top = d * ROW + 'px';
			/* Zoom to the frame (out again from the top one). */
			div.addEventListener('click', function () {
				state.zoom = node === top && top !== root ?
				    null : node.key;
				icicle();
				blocks(node);
			});
			box.appendChild(div);
			list = kids(node);
			list.forEach(function (k) {
				var kw = w * k.value / node.value;

				place(k, x, kw, d + 1);
				x += kw;
			});
		}
		place(top, 0, W, 0);
		box.style.height = rows * ROW + 'px';
	}

	function find(node, key) {
		var k, f;

		if (node.key === key)
			return node;
		for (k in node.kids) {
			f = find(node.kids[k], key);
			if (f)
				return f;
		}
		return null;
	}

	/* The blocks of the sites under a frame, largest first. */
	function blocks(node) {
		var want = {}, rows = [], box = $('blocks'), table, total = 0;
		var h = D.holders, n = 0;

		(function walk(x) {
			x.sites.forEach(function (s) { want[s] = 1; });
			Object.keys(x.kids).forEach(function (k) {
				walk(x.kids[k]);
			});
		})(node);
		Object.keys(want).forEach(function (s) {
			n += h.sites[s].blocks[state.at];
			total += h.sites[s].bytes[state.at];
		});
		h.blocks[state.at].forEach(function (b) {
			if (want[b[0]])
				rows.push(b);
		});
		rows.sort(function (a, b) { return b[3] - a[3]; });
		box.textContent = '';
		box.appendChild(el('h3', null, node.name.text + ': ' +
		    fmtBytes(total) + ' in ' + n + ' blocks' +
		    (rows.length < n ? ', the ' + rows.length +
		    ' largest listed' : '')));
		table = el('table', { 'class': 'blocks' },
		    el('tr', null, el('th', null, 'size'), el('th', null,
		    'stream'), el('th', null, 'where'), el('th', null,
		    'address'), el('th', null, 'allocated'),
		    el('th', null, 'site')));
		rows.slice(0, 500).forEach(function (b) {
			var site = h.sites[b[0]];

			table.appendChild(el('tr', { 'class': 'block' },
			    el('td', null, fmtBytes(b[3])),
			    el('td', null, fmtStream(b[2])),
			    el('td', null, D.lanes[b[1]] ?
			    D.lanes[b[1]].label : ''),
			    el('td', null, b[4]),
			    el('td', null, (b[5] === null ? '' : 'step ' +
			    b[5] + ', ') + fmtTime(b[6])),
			    el('td', null, site.label || '(no stack)')));
		});
		box.appendChild(table);
	}

	/*
	 * The sites holding what grew, as `vramtrace leaks` lists them: each
	 * named by the program's own line that made its memory.
	 */
	function suspects() {
		var v = D.verdict, box = $('verdict'), t;

		if (v.suspects.length === 0)
			return;
		box.appendChild(el('div', { 'class': 'caption' }, 'sites ' +
		    'holding memory ' + (D.steps.length === 0 ? 'live at the ' +
		    'end' : 'allocated after the warm-up, live at the last ' +
		    'step') + ':'));
		t = el('table', { id: 'suspects' }, el('tr', null,
		    el('th', null, 'bytes'), el('th', null, 'blocks'),
		    el('th', null, 'stream'), el('th', null, 'site')));
		v.suspects.forEach(function (x) {
			t.appendChild(el('tr', { 'class': 'suspect',
			    'data-bytes': x.bytes, 'title': x.site || '' },
			    el('td', null, fmtBytes(x.bytes)),
			    el('td', null, x.blocks),
			    el('td', null, fmtStream(x.stream)),
			    el('td', null, x.name)));
		});
		box.appendChild(t);
	}

	function ranks() {
		var v = D.verdict, box = $('verdict'), t;

		if (v.ranks.length === 0)
			return;
		t = el('table', { 'class': 'ranks' }, el('tr', null,
		    el('th', null, 'rank'), el('th', null, 'verdict'),
		    el('th', null, 'growth per step')));
		v.ranks.forEach(function (k) {
			t.appendChild(el('tr', { 'data-rank': k.rank },
			    el('td', null, k.rank), el('td', null, k.verdict),
			    el('td', null, k.growth_bytes_per_step === null ?
			    'n/a' : fmtSigned(Math.round(
			    k.growth_bytes_per_step)))));
		});
		box.appendChild(t);
	}

	function controls() {
		$('layer-select').addEventListener('change', function (ev) {
			state.layer = ev.target.value;
			redraw();
		});
		Array.prototype.forEach.call(document.querySelectorAll(
		    'input[name=group]'), function (r) {
			r.addEventListener('change', function (ev) {
				state.group = ev.target.value;
				$('layer-select').disabled =
				    state.group === 'layer';
				redraw();
			});
		});
		var pending = null;
		window.addEventListener('resize', function () {
			clearTimeout(pending);
			pending = setTimeout(function () {
				redraw();
				icicle();
			}, 150);
		});
	}

	header();
	pinned();
	suspects();
	ranks();
	lanes();
	growth();
	holderTabs();
	icicle();
	controls();
	document.documentElement.setAttribute('data-draw-ms',
	    performance.now().toFixed(1));
	document.documentElement.setAttribute('data-script-ms',
	    (performance.now() - start).toFixed(1));
	document.documentElement.setAttribute('data-ready', '1');
})();
