package results

// reportTemplate is the report page. It is a constant rather than an embedded
// file so that nothing at package level can be changed at run time; all
// geometry is computed in Go and the template only places it.
const reportTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 24px auto; max-width: 980px; padding: 0 16px; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 32px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
tr.differs td { background: #fff6d5; }
table.config th, table.config td { overflow-wrap: anywhere; }
.warn { color: #b00; font-weight: 600; }
figure.chart { margin: 16px 0; padding: 8px; border: 1px solid #e4e4e4; border-radius: 4px; }
figcaption .note { color: #777; font-size: 12px; margin-left: 8px; }
p.empty { color: #555; font-style: italic; padding: 24px; margin: 0; text-align: center; background: #fafafa; }
svg { max-width: 100%; height: auto; }
svg text { font-size: 11px; fill: #333; }
svg text.axis-label { fill: #555; font-size: 12px; }
svg text.fault-label { fill: #a33; font-size: 10px; }
svg line.axis { stroke: #444; } svg line.grid { stroke: #eee; }
svg line.fault { stroke: #c33; stroke-dasharray: 4 3; }
svg rect.fault-band { fill: #c33; fill-opacity: 0.08; }
svg polyline.data { fill: none; stroke-width: 1.8; stroke-linejoin: round; }
ul.legend { list-style: none; padding: 0; margin: 4px 0 0; display: flex; flex-wrap: wrap; gap: 14px; font-size: 12px; }
{{if .Extras}}p.notice { background: #f3f6fb; border: 1px solid #d5deeb; padding: 8px 12px; }
p.caption { color: #444; font-size: 12px; margin: 4px 0 0; }
svg circle.data { stroke-width: 1.5; }
svg circle.knee, svg circle.saturation { fill: none; stroke-width: 1.6; }
svg circle.knee { stroke: #222; } svg circle.saturation { stroke: #b00; stroke-dasharray: 3 2; }
svg text.point-label { font-size: 9px; fill: #666; }
svg text.mark-label { font-size: 10px; font-weight: 600; }
svg rect.nodata { fill: #f2f2f2; stroke: #ddd; }
svg rect.best { fill: none; stroke: #000; stroke-width: 2.5; }
svg text.cell { font-size: 10px; fill: #222; } svg text.cell.light { fill: #fff; }
{{end}}</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{with .Notice}}<p class="notice">{{.}}</p>
{{end}}{{if .Runs}}<table class="runs">
<tr><th>run</th><th>started</th><th data-figure="duration_s">duration</th><th data-figure="throughput.acquired_per_s">acquired/s</th><th data-figure="throughput.attempts_per_s">attempts/s</th><th data-figure="ops.acquire.latency_us.p50">acquire p50</th><th data-figure="ops.acquire.latency_us.p99">p99</th><th data-figure="ops.acquire.latency_us.p999">p99.9</th><th data-figure="contention.rate">contention</th><th data-figure="incidents">incidents</th><th data-figure="errors">errors</th></tr>
{{range .Runs}}<tr><td><svg width="10" height="10"><rect width="10" height="10" fill="{{.Color}}"/></svg> {{.Name}}{{if .Partial}} <span class="warn">PARTIAL</span>{{end}}{{if .Unsafe}} <span class="warn">UNSAFE lock</span>{{end}}<br><small>{{.Headline}}{{with .Tags}} · tags {{.}}{{end}}</small></td><td>{{.Started}}</td><td>{{.Duration}}</td><td>{{.Acquired}}</td><td>{{.Attempts}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Rate}}</td><td>{{.Incidents}}</td><td>{{.Errors}}</td></tr>
{{end}}</table>
{{end}}{{with .Checks}}<h2>Thresholds</h2>
<table class="checks" data-chart="checks">
<tr><th>threshold</th><th>run</th><th>actual</th><th>verdict</th></tr>
{{range .}}<tr><td>{{.Expr}}</td><td>{{.Run}}</td><td>{{.Actual}}</td><td{{if .Failed}} class="warn"{{end}}>{{.Verdict}}</td></tr>
{{end}}</table>
{{end}}{{range .Sections}}
<h2>{{.Title}}</h2>
{{range .Charts}}<figure class="chart" data-chart="{{.Name}}" data-empty="{{if .Empty}}true{{else}}false{{end}}"{{with .Figures}} data-figures="{{join .}}"{{end}}>
<figcaption><strong>{{.Title}}</strong>{{with .Note}}<span class="note">{{.}}</span>{{end}}</figcaption>
{{if .Empty}}<p class="empty">{{.Empty}}</p>
{{else}}<svg viewBox="0 0 {{f .W}} {{f .H}}" width="{{f .W}}" height="{{f .H}}" role="img" aria-label="{{.Title}}">
{{range .Bands}}<rect class="fault-band" x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Axes}}<line class="{{.Class}}" x1="{{f .X1}}" y1="{{f .Y1}}" x2="{{f .X2}}" y2="{{f .Y2}}"/>
{{end}}{{range .Rects}}<rect class="data" x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}" fill="{{.Color}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Boxes}}<rect class="{{.Class}}" x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}" fill="{{.Fill}}" stroke="{{.Stroke}}">{{with .Title}}<title>{{.}}</title>{{end}}</rect>
{{end}}{{range .Lines}}<polyline class="data" points="{{.Points}}" stroke="{{.Color}}"><title>{{.Title}}</title></polyline>
{{end}}{{range .Offered}}<polyline class="data offered" points="{{.Points}}" stroke="{{.Color}}" stroke-dasharray="1.5 3"><title>{{.Title}}</title></polyline>
{{end}}{{range .Dots}}<circle class="{{.Class}}" cx="{{f .X}}" cy="{{f .Y}}" r="{{f .R}}" fill="{{.Fill}}" stroke="{{.Stroke}}">{{with .Title}}<title>{{.}}</title>{{end}}</circle>
{{end}}{{range .Marks}}<line class="{{.Class}}" x1="{{f .X1}}" y1="{{f .Y1}}" x2="{{f .X2}}" y2="{{f .Y2}}"/>
{{end}}{{range .Texts}}<text class="{{.Class}}" x="{{f .X}}" y="{{f .Y}}" text-anchor="{{.Anchor}}">{{.Text}}</text>
{{end}}</svg>
{{end}}{{with .Table}}<table class="figures"><tr>{{range .Header}}<th{{with .Key}} data-figure="{{.}}"{{end}}>{{.Label}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{with .Caption}}<p class="caption">{{.}}</p>
{{end}}{{with .Legend}}<ul class="legend">{{range .}}<li><svg width="12" height="12"><rect width="12" height="12" fill="{{.Color}}"/></svg> {{.Label}}</li>{{end}}</ul>
{{end}}</figure>
{{end}}{{end}}
{{if .Runs}}<h2>Configuration</h2>
<table class="config">
<tr><th>field</th>{{range .Config.IDs}}<th>{{.}}</th>{{end}}</tr>
{{range .Config.Rows}}<tr{{if .Differs}} class="differs"{{end}}><td>{{.Key}}</td>{{range .Values}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<p><small>Rows where the runs differ are highlighted. Generated by lockbench from the result files alone; this page needs no network.</small></p>
{{else}}<p><small>Generated by lockbench from the result files alone; this page needs no network.</small></p>
{{end}}</body>
</html>
`
