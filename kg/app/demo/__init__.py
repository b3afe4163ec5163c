"""The demo: a small wind-fleet maintenance corpus and the run that loads it, builds the layers and asks."""

from kg.app.demo.runner import CORPUS, QUESTIONS, DemoQuestion, DemoReport, run_demo

__all__ = ["CORPUS", "QUESTIONS", "DemoQuestion", "DemoReport", "run_demo"]
