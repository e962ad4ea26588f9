/**
 * The web UI's only stylesheet, served from /ui/style.css so the CSP can allow `style-src 'self'`
 * and still forbid every inline style (no hash to keep in step with the text). Readable from a
 * phone to a laptop: one column that widens, tables that scroll sideways instead of squeezing.
 */
export const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1d2327; --muted: #5b6670; --bg: #fbfbfa; --card: #ffffff; --line: #d8dcdf; --accent: #2457c5; --accent-fg: #ffffff; --good: #1f7a4d; --bad: #b3261e; --warn: #8a5a00;
  font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.5; color: var(--fg); background: var(--bg); }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8ea; --muted: #a3adb6; --bg: #15181b; --card: #1d2125; --line: #353b41; --accent: #7fa6ff; --accent-fg: #0d1320; --good: #5fd49a; --bad: #ff8a80; --warn: #f0c060; } }
* { box-sizing: border-box; }
body { margin: 0; }
main { max-width: 68rem; margin: 0 auto; padding: 1rem 1rem 3rem; }
main:focus { outline: none; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.75rem 0 0.5rem; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999rem; }
.skip:focus { left: 1rem; top: 0.5rem; background: var(--card); padding: 0.4rem 0.8rem; z-index: 1; }
.top { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; align-items: center; padding: 0.6rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); }
.brand { font-weight: 700; font-size: 1.1rem; color: var(--fg); text-decoration: none; }
.top nav { flex: 1; }
.top nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; }
.top nav a { text-decoration: none; padding: 0.2rem 0; }
.top nav a[aria-current="page"] { font-weight: 700; border-bottom: 2px solid var(--accent); }
.top form { margin: 0; }
.find form { display: flex; gap: 0.4rem; align-items: center; }
.find input { width: 14rem; min-width: 0; flex: 1 1 auto; padding: 0.3rem 0.5rem; }
.find button { padding: 0.3rem 0.8rem; }
@media (max-width: 40rem) { .top .find { flex: 1 1 100%; order: 1; } .find input { width: auto; } }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
button, .button { font: inherit; cursor: pointer; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg); padding: 0.45rem 1rem; border-radius: 0.4rem; text-decoration: none; display: inline-block; }
button.quiet, .button.quiet { background: transparent; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); color: #fff; }
input, select, textarea { font: inherit; color: inherit; background: var(--card); border: 1px solid var(--line); border-radius: 0.35rem; padding: 0.4rem 0.5rem; max-width: 100%; }
textarea { width: 100%; min-height: 4.5rem; }
label { font-weight: 600; display: block; margin-bottom: 0.2rem; }
.hint, .muted { color: var(--muted); font-size: 0.92rem; }
.fields { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: 0.75rem 1rem; align-items: end; margin-bottom: 1rem; }
.fields .wide { grid-column: 1 / -1; }
.fields input[type="search"], .fields input[type="text"] { width: 100%; }
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: center; margin: 0.75rem 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 0.5rem; padding: 0.9rem 1.1rem; margin: 0 0 1rem; }
.card h2, .card h3 { margin-top: 0; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); gap: 1rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(19rem, 1fr)); gap: 1rem; }
.content { white-space: pre-wrap; overflow-wrap: anywhere; }
.flash { border-left: 0.3rem solid; padding: 0.4rem 0.9rem; background: var(--card); }
.notice { border-color: var(--good); }
.problem { border-color: var(--bad); }
.verdict { font-size: 1.05rem; font-weight: 600; }
.tag { display: inline-block; font-size: 0.8rem; padding: 0 0.45rem; border-radius: 1rem; border: 1px solid var(--line); color: var(--muted); white-space: nowrap; }
.tag.bad { color: var(--bad); border-color: var(--bad); }
.tag.good { color: var(--good); border-color: var(--good); }
.tag.warn { color: var(--warn); border-color: var(--warn); }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain > li { padding: 0.5rem 0; border-bottom: 1px solid var(--line); }
ul.plain > li:last-child { border-bottom: 0; }
.hit h3 { font-size: 1.05rem; margin: 0 0 0.2rem; }
.meta { color: var(--muted); font-size: 0.9rem; display: flex; flex-wrap: wrap; gap: 0.2rem 0.8rem; }
.scroll { overflow-x: auto; margin-bottom: 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.45rem 0.6rem; border-bottom: 1px solid var(--line); }
th { font-size: 0.9rem; color: var(--muted); font-weight: 600; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0.5rem 0; }
dt { font-weight: 600; color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
ol.timeline { list-style: none; margin: 0; padding: 0 0 0 1.2rem; border-left: 2px solid var(--line); }
ol.timeline > li { position: relative; padding: 0 0 1rem 0.6rem; }
ol.timeline > li::before { content: ""; position: absolute; left: -1.65rem; top: 0.35rem; width: 0.8rem; height: 0.8rem; border-radius: 50%; background: var(--card); border: 2px solid var(--muted); }
ol.timeline > li.current::before { background: var(--accent); border-color: var(--accent); }
ol.timeline > li:target { background: var(--card); outline: 2px solid var(--accent); outline-offset: 0.3rem; border-radius: 0.3rem; }
ol.timeline > li.event::before { width: 0.5rem; height: 0.5rem; left: -1.5rem; top: 0.5rem; }
.change { margin: 0 0 0.2rem; }
.change p { margin: 0.2rem 0; }
.diff del, .legend del { text-decoration: line-through; text-decoration-thickness: 2px; color: var(--bad); background: color-mix(in srgb, var(--bad) 12%, transparent); }
.diff ins, .legend ins { text-decoration: underline; text-decoration-thickness: 2px; text-underline-offset: 0.15em; color: var(--good); background: color-mix(in srgb, var(--good) 12%, transparent); }
.decide { display: grid; grid-template-columns: minmax(0, 1fr); gap: 1rem; }
.decide form { margin: 0; }
.decide .reject { display: grid; gap: 0.5rem; }
.decide .reject button { justify-self: start; }
@media (min-width: 40rem) { .decide { grid-template-columns: max-content minmax(0, 1fr); align-items: start; } }
.chart svg { width: 100%; height: auto; max-width: 46rem; display: block; }
.chart .axis, .chart .grid-line { stroke: var(--line); stroke-width: 1; }
.chart .label { fill: var(--muted); font-size: 12px; }
.chart .step { fill: none; stroke: var(--accent); stroke-width: 2; }
.chart .point { fill: var(--accent); stroke: var(--card); stroke-width: 2; }
.chart .point.superseded { fill: var(--card); stroke: var(--accent); }
.chart a:focus-visible .point { stroke: var(--fg); stroke-width: 3; }
.key { font-family: ui-monospace, monospace; overflow-wrap: anywhere; background: var(--card); border: 2px dashed var(--good); padding: 0.6rem 0.8rem; }
details { margin: 0.5rem 0 1rem; }
details summary { cursor: pointer; color: var(--muted); }
figure.chart { margin: 0 0 1rem; }
fieldset { border: 0; padding: 0; margin: 0; }
legend { font-weight: 600; padding: 0; margin-bottom: 0.2rem; }
.choice { font-weight: 400; display: inline-flex; gap: 0.4rem; align-items: center; margin-right: 1rem; }
`;
