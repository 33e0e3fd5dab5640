"""The debugger's structured answer: a pydantic model whose JSON schema *is* the
`submit_diagnosis` tool's input schema, so what the model is asked for and what we
validate can never drift apart."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

FailureClass = Literal[
    "syntax_error",
    "import_error",
    "type_error",
    "test_failure",
    "lint_failure",
    "schema_mismatch",
    "missing_dependency",
    "task_spec_error",
]
EscalationCategory = Literal["ambiguous_requirements", "destructive", "external_service"]
CONFIDENCE_VALUE = {"high": 0.85, "medium": 0.6, "low": 0.3}


class Location(BaseModel):
    file: str = Field(description="Path relative to the repository root.")
    line: int | None = Field(default=None, description="1-based line number.")
    context: str = Field(default="", description="The code at that line, or what it does.")


class Change(BaseModel):
    file: str = Field(description="Path relative to the repository root.")
    line: int | None = Field(default=None, description="1-based line number of the change.")
    current: str = Field(default="", description="The code as it is now (exact text).")
    should_be: str = Field(description="The code as it should be.")


class Fix(BaseModel):
    description: str = Field(description="What to change and why it repairs the failures.")
    changes: list[Change] = Field(default_factory=list)


class Confidence(BaseModel):
    level: Literal["high", "medium", "low"]
    reason: str = Field(default="", description="Why this level.")


class Diagnosis(BaseModel):
    """One hypothesis about why the tests fail and how to fix it."""

    failure_classification: FailureClass
    root_cause: str = Field(description="The cause in one or two sentences.")
    root_cause_location: Location
    fix: Fix
    out_of_scope: bool = Field(default=False, description="True when the fix is outside this repository.")
    out_of_scope_reason: str | None = None
    upstream_dependency: str | None = Field(default=None, description="The dependency at fault, if any.")
    confidence: Confidence
    escalate_immediately: bool = Field(default=False, description="True when a person must decide.")
    escalation_category: EscalationCategory | None = None

    @model_validator(mode="after")
    def _escalation_needs_category(self) -> Diagnosis:
        if self.escalate_immediately and self.escalation_category is None:
            raise ValueError("escalate_immediately is true: set escalation_category")
        if self.out_of_scope and not self.out_of_scope_reason:
            raise ValueError("out_of_scope is true: set out_of_scope_reason")
        return self

    @property
    def confidence_value(self) -> float:
        return CONFIDENCE_VALUE[self.confidence.level]

    def summary(self) -> str:
        where = self.root_cause_location
        line = f":{where.line}" if where.line else ""
        return f"{self.root_cause} ({where.file}{line}) — fix: {self.fix.description}"


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline `$defs` so the tool schema is self-contained (gateways differ on `$ref` support)."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(dict(defs[node["$ref"].split("/")[-1]]))
            return {k: walk(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    inlined = walk(schema)
    assert isinstance(inlined, dict)  # a dict walks to a dict
    return inlined


def diagnosis_schema() -> dict[str, Any]:
    return _inline_refs(Diagnosis.model_json_schema())


def submit_diagnosis_tool() -> dict[str, Any]:
    return {
        "name": "submit_diagnosis",
        "description": "Submit your diagnosis of the failing tests. Call once per distinct hypothesis.",
        "input_schema": diagnosis_schema(),
    }
