package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/turn"
)

// The probes below call every ctx method of spec surfaces §1 and report
// what they saw in one line; each exists in Python and in Starlark, and
// the two lines must be the same.
const (
	probeInPy = `
def process(ctx):
    i = ctx.input
    out = ["raw=" + i.raw_text, "att=%d" % len(i.attachments)]
    i.add_context("probe system context")
    i.add_context("probe user part", role="user")
    out.append("root=%s" % ("/runtime/artifacts/" in i.session_root))
    out.append("can=%s/%s" % (ctx.capability.can("tool.call:echo"), ctx.capability.can("secret.bind:NOPE")))
    ctx.capability.require("tool.call:echo")
    for name, s in (("session", ctx.state.session), ("core", ctx.state.core)):
        s.set("m.n", 1)
        s.merge("m", {"k": "v"})
        s.append("m.list", "a")
        out.append("%s=%s,%s,%s,%d" % (name, s.get("m.n"), s.get("m.k"), s.get("m.list")[0], len(s.snapshot()["m"])))
    r = ctx.tools.call("echo", {"text": "x"})
    out.append("tool=%s/%s" % (r.content, r.is_error))
    ctx.skills.activate("debugging")
    out.append("history=%d" % len(ctx.history.recent_messages(10)))
    p = i.progress("progress from input")
    n = i.notice("notice from input")
    out.append("handles=%s" % (len(p.delivery_id) > 0 and len(n.delivery_id) > 0))
    i.progress("in: " + " ".join(out))
`
	probeInStar = `
def process(ctx):
    i = ctx.input
    out = ["raw=" + i.raw_text, "att=%d" % len(i.attachments)]
    i.add_context("probe system context")
    i.add_context("probe user part", role = "user")
    out.append("root=%s" % ("/runtime/artifacts/" in i.session_root))
    out.append("can=%s/%s" % (ctx.capability.can("tool.call:echo"), ctx.capability.can("secret.bind:NOPE")))
    ctx.capability.require("tool.call:echo")
    for name, s in (("session", ctx.state.session), ("core", ctx.state.core)):
        s.set("m.n", 1)
        s.merge("m", {"k": "v"})
        s.append("m.list", "a")
        out.append("%s=%s,%s,%s,%d" % (name, s.get("m.n"), s.get("m.k"), s.get("m.list")[0], len(s.snapshot()["m"])))
    r = ctx.tools.call("echo", {"text": "x"})
    out.append("tool=%s/%s" % (r.content, r.is_error))
    ctx.skills.activate("debugging")
    out.append("history=%d" % len(ctx.history.recent_messages(10)))
    p = i.progress("progress from input")
    n = i.notice("notice from input")
    out.append("handles=%s" % (len(p.delivery_id) > 0 and len(n.delivery_id) > 0))
    i.progress("in: " + " ".join(out))
`
	probeOutPy = `
def process(ctx):
    o = ctx.output
    out = ["resp=" + o.response_text]
    out.append("send=%s" % (len(o.send_text("plain text").delivery_id) > 0))
    o.send_image("https://example.com/a.png", caption="an image", history_text="[image]")
    o.send_audio("https://example.com/a.mp3", caption="a sound", history_text="[audio]")
    o.send_video("https://example.com/a.mp4", caption="a film", history_text="[video]")
    o.send_file("note.txt", caption="a file", history_text="[file]")
    o.send([{"type": "text", "text": "block one"}, "block two"])
    ctx.result.set({"k": 1})
    ctx.result.set({"j": 2})
    out.append("result=%d,%d" % (ctx.result.value["k"], ctx.result.value["j"]))
    r = ctx.agents.run("evolver", "child goal", tools="none")
    out.append("child=%s/%s/%d" % (r.core_id, r.content, len(r.deliveries)))
    # The history is read before the spawn: the spawned child may end,
    # and its completion reach the session, at any moment after it.
    h = len(ctx.history.recent_messages(10))
    sp = ctx.agents.spawn("evolver", "background goal", tools="none")
    out.append("spawn=%s/%s/%s" % (sp.core_id, sp.status, sp.task_id[:5]))
    out.append("history=%d" % h)
    o.notice("out: " + " ".join(out))
`
	probeOutStar = `
def process(ctx):
    o = ctx.output
    out = ["resp=" + o.response_text]
    out.append("send=%s" % (len(o.send_text("plain text").delivery_id) > 0))
    o.send_image("https://example.com/a.png", caption = "an image", history_text = "[image]")
    o.send_audio("https://example.com/a.mp3", caption = "a sound", history_text = "[audio]")
    o.send_video("https://example.com/a.mp4", caption = "a film", history_text = "[video]")
    o.send_file("note.txt", caption = "a file", history_text = "[file]")
    o.send([{"type": "text", "text": "block one"}, "block two"])
    ctx.result.set({"k": 1})
    ctx.result.set({"j": 2})
    out.append("result=%d,%d" % (ctx.result.value["k"], ctx.result.value["j"]))
    r = ctx.agents.run("evolver", "child goal", tools = "none")
    out.append("child=%s/%s/%d" % (r.core_id, r.content, len(r.deliveries)))
    # The history is read before the spawn: the spawned child may end,
    # and its completion reach the session, at any moment after it.
    h = len(ctx.history.recent_messages(10))
    sp = ctx.agents.spawn("evolver", "background goal", tools = "none")
    out.append("spawn=%s/%s/%s" % (sp.core_id, sp.status, sp.task_id[:5]))
    out.append("history=%d" % h)
    o.notice("out: " + " ".join(out))
`
)

const probePipelines = "schema_version: 1\ninput:\n  serial: [probe_in, base_input]\n  parallel: []\noutput:\n  serial: [base_output, probe_out]\n  parallel: []\nbootstrap:\n  serial: [session_context]\n"

// Every ctx method, end to end with the real interpreter and the real
// Host, from a Python and from a Starlark slot: both see the same.
func TestCtxSDKFromPythonAndStarlark(t *testing.T) {
	lines := map[string]string{}
	for _, lang := range []string{"py", "star"} {
		t.Run(lang, func(t *testing.T) {
			in, out := probeInPy, probeOutPy
			if lang == "star" {
				in, out = probeInStar, probeOutStar
			}
			h, _ := openPythonHost(t, func(core string) {
				writeFile(t, filepath.Join(core, "agent/input/probe_in/slot.yaml"),
					"failure_policy: hard\ncapabilities: [state.session.read, state.session.write, state.core.read, state.core.write, 'tool.call:echo']\n")
				writeFile(t, filepath.Join(core, "agent/input/probe_in/module."+lang), in)
				writeFile(t, filepath.Join(core, "agent/output/probe_out/slot.yaml"), "failure_policy: hard\ncapabilities: ['agents.run:evolver']\n")
				writeFile(t, filepath.Join(core, "agent/output/probe_out/module."+lang), out)
				writeFile(t, filepath.Join(core, "agent/pipelines.yaml"), probePipelines)
			}, "parent answer", "child answer")
			ws := t.TempDir()
			writeFile(t, filepath.Join(ws, "note.txt"), "a note\n")
			res, err := h.Run(context.Background(), turn.Request{Text: "hello", NewSession: true, Workspace: ws})
			if err != nil || res.Outcome != turn.OutcomeCompleted {
				t.Fatalf("turn: %v %+v", err, res)
			}
			var report []string
			var texts []string
			for _, d := range res.Deliveries {
				texts = append(texts, d.Text)
				if strings.HasPrefix(d.Text, "in: ") || strings.HasPrefix(d.Text, "out: ") {
					report = append(report, d.Text)
				}
			}
			lines[lang] = strings.Join(report, "\n")
			want := "in: raw=hello att=0 root=True can=True/False session=1,v,a,3 core=1,v,a,3 tool=echo:x/False history=0 handles=True\n" +
				"out: resp=parent answer send=True result=1,2 child=evolver/child answer/1 spawn=evolver/running/task_ history=1"
			if lines[lang] != want {
				t.Errorf("report:\n%s\nwant:\n%s\n(deliveries %q)", lines[lang], want, texts)
			}
			if got := fmt.Sprint(res.AgentResult); got != "map[j:2 k:1]" {
				t.Errorf("the turn's agent result %s", got)
			}
			for _, want := range []string{"progress from input", "notice from input", "plain text", "an image", "a sound", "a film", "a file", "block one"} {
				if !strings.Contains(strings.Join(texts, "|"), want) {
					t.Errorf("no delivery %q in %q", want, texts)
				}
			}
		})
	}
	if lines["py"] != lines["star"] {
		t.Errorf("Python saw\n%s\nStarlark saw\n%s", lines["py"], lines["star"])
	}
}

// Each ctx method a component is not granted is refused when called: a
// PermissionError naming the capability in Python, a failure of the slot
// naming it in Starlark.
func TestCtxDenialsFromPythonAndStarlark(t *testing.T) {
	cases := []struct{ name, call, capability string }{
		{"session_get", `ctx.state.session.get("a")`, "state.session.read"},
		{"session_set", `ctx.state.session.set("a", 1)`, "state.session.write"},
		{"session_snapshot", `ctx.state.session.snapshot()`, "state.session.read"},
		{"core_merge", `ctx.state.core.merge("a", {})`, "state.core.write"},
		{"core_append", `ctx.state.core.append("a", 1)`, "state.core.write"},
		{"core_snapshot", `ctx.state.core.snapshot()`, "state.core.read"},
		{"tools_call", `ctx.tools.call("echo", {"text": "x"})`, "tool.call:echo"},
		{"agents_run", `ctx.agents.run("evolver", "x")`, "agents.run:evolver"},
		{"agents_spawn", `ctx.agents.spawn("assistant", "x")`, "agents.spawn:assistant"},
		{"skills_activate", `ctx.skills.activate("debugging")`, "skill.activate"},
		{"require", `ctx.capability.require("secret.bind:NOPE")`, "secret.bind:NOPE"},
	}
	var py, star strings.Builder
	py.WriteString("CASES = {\n")
	star.WriteString("def process(ctx):\n    ctx.input.add_context(ctx.input.raw_text, role = \"user\")\n")
	for _, c := range cases {
		py.WriteString("    " + `"` + c.name + `": lambda ctx: ` + c.call + ",\n")
		star.WriteString("    if ctx.input.raw_text == \"" + c.name + "\":\n        " + c.call + "\n")
	}
	py.WriteString("}\n\ndef process(ctx):\n    ctx.input.add_context(ctx.input.raw_text, role=\"user\")\n    try:\n        CASES[ctx.input.raw_text](ctx)\n        ctx.input.progress(\"allowed\")\n    except PermissionError as e:\n        ctx.input.progress(\"PermissionError: %s\" % e)\n")

	for _, lang := range []string{"py", "star"} {
		t.Run(lang, func(t *testing.T) {
			src := py.String()
			if lang == "star" {
				src = star.String()
			}
			h, _ := openPythonHost(t, func(core string) {
				writeFile(t, filepath.Join(core, "agent/input/deny/slot.yaml"), "failure_policy: hard\n")
				writeFile(t, filepath.Join(core, "agent/input/deny/module."+lang), src)
				writeFile(t, filepath.Join(core, "agent/pipelines.yaml"), strings.NewReplacer("[probe_in, base_input]", "[deny]", "[base_output, probe_out]", "[base_output]").Replace(probePipelines))
				agent := filepath.Join(core, "agent.yaml")
				b, err := os.ReadFile(agent)
				if err != nil {
					t.Fatal(err)
				}
				// No component of this core may activate skills.
				writeFile(t, agent, strings.Replace(string(b), "    skill.activate: {}\n", "", 1))
			})
			for _, c := range cases {
				res, err := h.Run(context.Background(), turn.Request{Text: c.name, NewSession: true})
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				want := "capability denied: " + c.capability + " for agent/input/deny"
				switch lang {
				case "py":
					if got := deliveredTexts(res); res.Outcome != turn.OutcomeCompleted || got != "PermissionError: "+want && !strings.HasPrefix(got, "PermissionError: "+want+"|") {
						t.Errorf("%s: %s %q, want PermissionError: %s", c.name, res.Outcome, got, want)
					}
				case "star":
					if res.Outcome != turn.OutcomeFailed || res.Error == nil || !strings.Contains(res.Error.Message, want) {
						t.Errorf("%s: %s %+v, want a failure naming %s", c.name, res.Outcome, res.Error, want)
					}
				}
			}
		})
	}
}
