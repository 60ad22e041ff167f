"""The LLM drill-down of DESIGN §4.4: expansion rounds judged by the LLM, with caps and a trace."""

from kgservice.drilldown.judge import Decision, judge, judge_messages
from kgservice.drilldown.loop import (
    DrillParams,
    DrillResult,
    QueryState,
    RoundRecord,
    covered,
    drill_down,
    initial_mode,
)

__all__ = ["Decision", "DrillParams", "DrillResult", "QueryState", "RoundRecord", "covered", "drill_down",
           "initial_mode", "judge", "judge_messages"]
