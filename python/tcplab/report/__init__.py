"""Self-contained HTML reports: of one run (`tcplab run`), of a results directory
(`tcplab report`) and of a paper's reproduction (`tcplab reproduce`)."""

from tcplab.report.run import render_report, write_report

__all__ = ["render_report", "write_report"]
