"""Charts of a phase matrix: pandas frames in, Vega-Lite (Altair) out, each saved as SVG, PNG
and an HTML page that loads one shared Vega runtime by a relative path (nothing fetched when
it is opened, offline).

One module per kind of chart, each with `draw(...)` (from what the chart draws) and
`chart(...)` (from its frame), so each kind is drawn by a stage that re-runs only when its
inputs or its own code change (a system's rows, which all read the phase matrix, in one job);
`sources` reads the statistics a chart job is handed; `frames` turns them and the runs into
the tables the charts draw; `names` says which charts a
config gets and their captions (without importing Altair, so the workflow can ask cheaply);
`runtime` writes the Vega runtime; `gallery` puts every chart and the matrix's tables on one
page, under the `power` panel; `style` holds the colours (Okabe–Ito's, told apart with any
colour vision; Vega's blue–orange where a colour is a signed quantity) and saving.
"""
