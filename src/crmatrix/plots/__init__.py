"""Charts of a phase matrix: pandas frames in, Vega-Lite (Altair) out, each saved as SVG, PNG
and self-contained HTML (the Vega libraries inlined, nothing fetched when it is opened).

One module per kind of chart, each with `chart(...)`; `frames` turns a matrix and its runs
into the tables they draw; `catalog` draws them all; `names` says which charts a config
gets and their captions (without importing Altair, so the workflow can ask cheaply);
`gallery` puts every chart and the matrix's tables on one page; `style` holds the colours
(Okabe–Ito's, told apart with any colour vision; Vega's blue–orange where a colour is a
signed quantity) and saving.
"""
