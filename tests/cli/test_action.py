"""The GitHub Action (action.yml) is the CLI in steps: each `run:` step is read from action.yml and
run with bash as a runner would (inputs and step outputs substituted, `$GITHUB_OUTPUT`,
`$RUNNER_TEMP`), in order, stopping at the first that fails. Not run: `actions/setup-python` and
the step installing Agentdex from the action's path, which the test's own environment already is.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from signing import SigningKey, StaticKeyResolver, generate_key, public_jwks, save_private_key_pem, verify_card
from tests.support.agentdex_processes import user_env
from tests.support.cards import make_card
from tests.support.servers import CardServer

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
CONDITION = re.compile(r"^(\S+) (==|!=) '([^']*)'$")
NOT_RUN_HERE = {"install"}


class ActionRun:
    """One run of the action's steps with `inputs` (defaults from action.yml) and `env` (the
    caller step's environment, where secrets go)."""

    def __init__(self, workdir: Path, inputs: dict[str, str], env: dict[str, str]) -> None:
        unknown = set(inputs) - set(ACTION["inputs"])
        assert not unknown, f"action.yml has no inputs {unknown}"
        self.inputs = {name: inputs.get(name, spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
        self.workdir, self.env = workdir, env
        self.step_outputs: dict[str, dict[str, str]] = {}
        self.ran: list[tuple[str, subprocess.CompletedProcess[str]]] = []

    def value(self, expression: str) -> str:
        context, _, rest = expression.partition(".")
        if context == "inputs":
            return self.inputs[rest]
        if context == "steps":
            step, _, output = rest.partition(".outputs.")
            return self.step_outputs.get(step, {}).get(output, "")
        assert expression == "github.action_path", f"no value for {expression} in this test"
        return str(ROOT)

    def substitute(self, text: str) -> str:
        return EXPRESSION.sub(lambda match: self.value(match.group(1)), text)

    def wanted(self, condition: str | None) -> bool:
        if condition is None:
            return True
        match = CONDITION.match(condition)
        assert match, f"the test reads only `NAME == 'value'` conditions, not {condition!r}"
        return (self.value(match.group(1)) == match.group(3)) == (match.group(2) == "==")

    def run(self) -> bool:
        """Run the steps in order; False when one failed (the rest are skipped, as on a runner)."""
        for step in ACTION["runs"]["steps"]:
            if "run" not in step or step.get("id") in NOT_RUN_HERE or not self.wanted(step.get("if")):
                continue
            if self._run_step(step).returncode != 0:
                return False
        return True

    def _run_step(self, step: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        output_file = self.workdir / f"github-output-{step['id']}"
        output_file.write_text("")
        env = {
            **user_env(),
            **self.env,
            "RUNNER_TEMP": str(self.workdir),
            "GITHUB_OUTPUT": str(output_file),
            **{name: self.substitute(str(value)) for name, value in step.get("env", {}).items()},
        }
        assert step["shell"] == "bash"
        process = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", self.substitute(step["run"])],
            cwd=self.workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = output_file.read_text().splitlines()
        self.step_outputs[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
        self.ran.append((step["id"], process))
        return process

    def output(self, step_id: str) -> str:
        process = dict(self.ran)[step_id]
        return process.stdout + process.stderr


@pytest.fixture
def key() -> SigningKey:
    return generate_key("EdDSA")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "agent-card.json").write_text(json.dumps(make_card("Weather", skills=3), indent=2))
    return tmp_path


def secret_env(key: SigningKey) -> dict[str, str]:
    """What `env: AGENTDEX_SIGNING_KEY: ${{ secrets.… }}` on the calling step gives the action."""
    return {"AGENTDEX_SIGNING_KEY": save_private_key_pem(key).decode()}


def test_the_action_installs_agentdex_from_its_own_path():
    install = next(step for step in ACTION["runs"]["steps"] if step.get("id") == "install")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert 'pip install --quiet "$ACTION_PATH"' in install["run"]


def test_validate_sign_verify_with_a_key_from_a_secret(workdir, key):
    run = ActionRun(workdir, {"card": "agent-card.json", "signed-card": "signed.json"}, secret_env(key))
    assert run.run(), [run.output(step) for step, _ in run.ran]
    assert [step for step, _ in run.ran] == ["validate", "sign", "verify"]  # publish is off by default
    signed = json.loads((workdir / "signed.json").read_text())
    assert verify_card(signed, StaticKeyResolver([key.public])).ok
    assert "::error" not in run.output("validate") + run.output("verify")


def test_signing_again_in_place_replaces_the_signature(workdir, key):
    for _ in range(2):
        run = ActionRun(workdir, {"card": "agent-card.json"}, secret_env(key))
        assert run.run(), [run.output(step) for step, _ in run.ran]
    assert len(json.loads((workdir / "agent-card.json").read_text())["signatures"]) == 1


def test_an_invalid_card_stops_the_action_with_an_annotation(workdir, key):
    card = make_card("Weather")
    del card["skills"][0]["name"]
    (workdir / "agent-card.json").write_text(json.dumps(card))
    run = ActionRun(workdir, {"card": "agent-card.json"}, secret_env(key))
    assert not run.run()
    assert [step for step, _ in run.ran] == ["validate"]
    assert "::error file=agent-card.json" in run.output("validate")


def test_a_card_signed_with_another_key_than_the_jwks_fails_verification(workdir, key):
    (workdir / "jwks.json").write_text(json.dumps(public_jwks([generate_key("EdDSA")])))
    run = ActionRun(workdir, {"card": "agent-card.json", "jwks": "jwks.json"}, secret_env(key))
    assert not run.run()
    assert [step for step, _ in run.ran] == ["validate", "sign", "verify"]
    assert "::error " in run.output("verify")


def test_publish_to_a_live_registry(workdir, key, registry_url, writer_token, card_server: CardServer, client):
    jwks_url = card_server.serve_json("/jwks.json", public_jwks([key]))
    inputs = {
        "card": "agent-card.json",
        "publish": "true",
        "registry-url": registry_url,
        "registry-token": writer_token,
        "agent-url": "https://weather.example.com/.well-known/agent-card.json",
        "jwks-url": jwks_url,
    }
    run = ActionRun(workdir, inputs, secret_env(key))
    assert run.run(), [run.output(step) for step, _ in run.ran]
    assert [step for step, _ in run.ran] == ["validate", "sign", "verify", "publish"]
    (agent,) = client.get("/v1/agents").json["items"]
    assert agent["name"] == "Weather"
    assert client.get(f"/v1/agents/{agent['id']}").json["signature"]["state"] == "verified"
