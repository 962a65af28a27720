"""The picture of docs/clients.md: the `latest` layer of /v1/ogc as QGIS draws it, headless.

    BASE=http://127.0.0.1:3000/v1 KEY=gw_... python3 docs/latest-map.py docs/latest-map.png

Run against `gwapi demo` (its banner gives BASE and KEY) with Debian's python3-qgis. Each tube's latest
level is a dot coloured by its value, labelled with its well, tube and value; there is no base map,
so nothing but the service is asked. Prints the number of features drawn.
"""
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (  # noqa: E402 (the platform must be chosen before Qt loads)
    QgsApplication,
    QgsClassificationEqualInterval,
    QgsGraduatedSymbolRenderer,
    QgsMapRendererSequentialJob,
    QgsMapSettings,
    QgsPalLayerSettings,
    QgsStyle,
    QgsTextBufferSettings,
    QgsTextFormat,
    QgsVectorLayer,
    QgsVectorLayerSimpleLabeling,
)
from qgis.PyQt.QtCore import QSize  # noqa: E402
from qgis.PyQt.QtGui import QColor, QFont  # noqa: E402

SIZE = QSize(900, 600)

output = sys.argv[1]
app = QgsApplication([], False)
app.initQgis()

# QGIS 3.22 sends no header: the key goes in the URL, and QGIS adds it to every request.
uri = f"url='{os.environ['BASE']}/ogc?api_key={os.environ['KEY']}' typename='latest'"
layer = QgsVectorLayer(uri, "latest", "OAPIF")
if not layer.isValid():
    sys.exit(f"the latest layer of {os.environ['BASE']}/ogc is not valid: {layer.error().summary()}")
features = list(layer.getFeatures())

renderer = QgsGraduatedSymbolRenderer("value")
renderer.setClassificationMethod(QgsClassificationEqualInterval())
renderer.updateClasses(layer, 5)
renderer.updateColorRamp(QgsStyle.defaultStyle().colorRamp("Spectral"))
renderer.setSymbolSizes(4, 4)
layer.setRenderer(renderer)

text = QgsTextFormat()
text.setFont(QFont("DejaVu Sans"))
text.setSize(9)
buffer = QgsTextBufferSettings()
buffer.setEnabled(True)
buffer.setColor(QColor("white"))
text.setBuffer(buffer)
label = QgsPalLayerSettings()
label.fieldName = (
    "concat(\"wellName\", '\\ntube ', \"tubeNumber\", ': ', format_number(\"value\", 2), ' ', \"unit\", ' ', \"verticalDatum\")"
)
label.isExpression = True
label.setFormat(text)
# Two tubes of a well share its point: each label finds a place of its own around it.
label.placement = QgsPalLayerSettings.AroundPoint
label.dist = 1.5
label.displayAll = True
layer.setLabeling(QgsVectorLayerSimpleLabeling(label))
layer.setLabelsEnabled(True)

settings = QgsMapSettings()
settings.setLayers([layer])
settings.setDestinationCrs(layer.crs())
settings.setOutputSize(SIZE)
settings.setBackgroundColor(QColor("white"))
# Room around the points for their labels.
extent = layer.extent()
width, height = extent.width(), extent.height()
extent.setXMinimum(extent.xMinimum() - 0.35 * width)
extent.setXMaximum(extent.xMaximum() + 0.35 * width)
extent.setYMinimum(extent.yMinimum() - 0.15 * height)
extent.setYMaximum(extent.yMaximum() + 0.15 * height)
settings.setExtent(extent)
job = QgsMapRendererSequentialJob(settings)
job.start()
job.waitForFinished()
if not job.renderedImage().save(output, "PNG"):
    sys.exit(f"could not write {output}")
print(len(features))
# The layer goes before QGIS does: it crashes on exit while a provider is still alive.
del job, settings, layer
app.exitQgis()
