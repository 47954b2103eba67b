package slash

import (
	"context"
	"strconv"
	"strings"
)

func cmdBusy(_ context.Context, env Env, args string) (Outcome, error) {
	if args != "" {
		mode, ok := ParseBusyMode(args)
		if !ok {
			return Outcome{}, usage("busy")
		}
		env.SetBusyMode(mode)
	}
	return notice("busy mode: " + string(env.BusyMode())), nil
}

// cmdInterrupt is Ctrl-C as a command (spec surfaces §2.12): the running
// turn is cancelled, the queue is kept.
func cmdInterrupt(_ context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("interrupt", args); err != nil {
		return Outcome{}, err
	}
	if !env.Interrupt("/interrupt") {
		return notice("no running turn"), nil
	}
	return notice("interrupting current turn: /interrupt"), nil
}

// cmdStop clears the queue, then cancels the running turn (the channels'
// /stop, spec surfaces §2.12).
func cmdStop(_ context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("stop", args); err != nil {
		return Outcome{}, err
	}
	n := strconv.Itoa(env.ClearQueue())
	if env.Interrupt("/stop") {
		return notice("Stopped current turn; cleared " + n + " queued message(s)."), nil
	}
	return notice("No running turn; cleared " + n + " queued message(s)."), nil
}

// cmdQueue lists the waiting messages, or queues args as the next one.
func cmdQueue(_ context.Context, env Env, args string) (Outcome, error) {
	if args != "" {
		env.Enqueue(args)
		return notice("Queued: " + shorten(args, 80, "...")), nil
	}
	queued := env.Queued()
	if len(queued) == 0 {
		return notice("No queued messages."), nil
	}
	var b strings.Builder
	b.WriteString("## Queued messages\n")
	for i, q := range queued {
		b.WriteString("\n" + strconv.Itoa(i+1) + ". " + escapeInline(shorten(q, 100, "...")))
	}
	return notice(b.String()), nil
}

// exitAs is /exit and its twin /quit.
func exitAs(name string) handler {
	return func(_ context.Context, _ Env, args string) (Outcome, error) {
		if err := noArgs(name, args); err != nil {
			return Outcome{}, err
		}
		return Outcome{Action: ActionExit}, nil
	}
}

// escapeInline keeps user text from being read as markdown markup: each
// character markdown gives a meaning is escaped.
func escapeInline(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]()<>#+-.!|~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
