package results

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// backgroundCommands are commands a server runs for others than the lock's
// clients: replicas (REPLCONF, PSYNC), sentinels (PING, INFO, PUBLISH,
// SUBSCRIBE), cluster buses and connection set-up. None of them comes from
// a lock's script, so they are not counted as run inside scripts.
var backgroundCommands = []string{"replconf", "psync", "sync", "ping", "info", "publish", "subscribe", "hello", "auth", "select",
	"client", "cluster", "config", "command", "sentinel"}

// isBackground reports whether a command name of INFO commandstats (which
// writes subcommands as "client|setinfo") is one of backgroundCommands.
func isBackground(name string) bool {
	base, _, _ := strings.Cut(strings.ToLower(name), "|")
	for _, b := range backgroundCommands {
		if base == b {
			return true
		}
	}
	return false
}

// scriptCalls are the commands that run a script or a function.
var scriptCalls = []string{"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"}

// runsScripts reports whether node n ran any script in the window.
func runsScripts(n ServerNode) bool {
	for name, c := range n.ByCommand {
		if c > 0 && slices.Contains(scriptCalls, strings.ToLower(name)) {
			return true
		}
	}
	return false
}

// ScriptCommands is how many of the servers' commands ran inside scripts
// rather than came from the lock's clients: per command name, what the
// servers that ran scripts ran (INFO commandstats) beyond what the lock's
// clients sent (Client.Sent), commands of replication and sentinels left
// out. INFO
// counts a script's own calls (release's GET and DEL) as commands, so
// "commands per acquisition" alone reads as more round trips than there
// were. It needs both counts; without either it says why.
func (r *Result) ScriptCommands() (int64, error) {
	switch {
	case r.Servers == nil || !r.Servers.Measured():
		return 0, errors.New("the result has no server figures")
	case r.Client == nil || r.Client.Sent == nil:
		return 0, errors.New("the result has no count of the commands its lock sent")
	}
	ran := map[string]int64{}
	for _, n := range r.Servers.Nodes {
		if !runsScripts(n) {
			// A replica runs a script's effects as plain commands, sent by
			// its primary: replication, not calls inside a script.
			continue
		}
		for name, c := range n.ByCommand {
			ran[strings.ToLower(name)] += c
		}
	}
	var inside int64
	for name, c := range ran {
		if isBackground(name) {
			continue
		}
		inside += max(0, c-r.Client.Sent.ByCommand[name])
	}
	return inside, nil
}

// ServerCostLine is the run table's line on what one acquisition cost the
// servers: the round trips the lock's clients made beside the commands the
// servers ran, those inside scripts named as such, and CPU. A figure per
// acquisition over none is n/a.
func ServerCostLine(r *Result) string {
	s := r.Servers
	if s == nil {
		return ""
	}
	if s.Unavailable != "" {
		return fmt.Sprintf("server cost: unavailable (%s)", s.Unavailable)
	}
	text := func(name string) string {
		f, err := LookupFigure(name)
		if err != nil {
			return NotMeasuredText(err)
		}
		v, err := f.Value(r)
		if err != nil {
			return NotMeasuredText(err)
		}
		return f.Format(v)
	}
	if r.Contention.Acquired == 0 {
		var cmds int64
		var cpu float64
		for _, n := range s.Nodes {
			cmds += n.Commands
			cpu += n.CPUUS
		}
		return fmt.Sprintf("server cost: n/a per acquisition, the run made none (over the window the servers executed %d commands in %s of CPU; %s)",
			cmds, FormatUS(cpu), s.Scope())
	}
	cost := text("servers.commands_per_acquire") + " commands"
	if r.Client != nil && r.Client.Sent != nil {
		cost = text("client.round_trips_per_acquire") + " round trips, " + text("servers.commands_per_acquire") + " server commands"
		if _, err := r.ScriptCommands(); err == nil {
			cost += " (" + text("servers.script_commands_per_acquire") + " inside scripts)"
		}
	}
	return fmt.Sprintf("server cost: %s and %s CPU per acquisition (%s)", cost, text("servers.cpu_us_per_acquire"), s.Scope())
}

// NoSuccessLine is one line saying that no attempt of the run succeeded,
// naming the commonest error kind; "" when some attempt did, or when there
// was no attempt at all.
func NoSuccessLine(r *Result) string {
	c := r.Contention
	if c.Acquired > 0 || c.Attempts == 0 {
		return ""
	}
	kind, n := "", int64(0)
	for _, k := range sortedKeys(r.Errors) {
		if r.Errors[k] > n {
			kind, n = k, r.Errors[k]
		}
	}
	if n == 0 {
		return fmt.Sprintf("no attempt succeeded: all %d attempts found the key held by another owner (%d contended)", c.Attempts, c.Contended)
	}
	return fmt.Sprintf("no attempt succeeded: %d attempts, %d failed; commonest error %s (%d of them)", c.Attempts, r.TotalErrors(), kind, n)
}
