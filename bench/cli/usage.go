package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
	"github.com/lockbench/lockbench/results/suggest"
)

// commandPath is the command as typed: "lockbench results report".
func commandPath(c *cli.Context) string {
	var names []string
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.Command.Name != "" {
			names = append(names, ctx.Command.Name)
		}
	}
	slices.Reverse(names)
	if len(names) == 0 || names[0] != c.App.Name {
		names = append([]string{c.App.Name}, names...)
	}
	return strings.Join(names, " ")
}

// usageMessage turns the flag parser's errors into one line in lockbench's
// own words: flags written as help writes them (--bogus, -c), the command
// named, where to look next, and a parser prefix never stacked on a message
// that already names the flag. Every command's flag errors pass through it.
func usageMessage(c *cli.Context, err error) string {
	msg, path := err.Error(), commandPath(c)
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return unknownFlagMessage(path, name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("%s needs a value; see %s --help", dashed(name), path)
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		return invalidValueMessage(c, rest, msg)
	}
	return msg
}

// unknownFlagMessage says a flag is not one of the command's. A run flag on
// a command that decides it itself is explained, not just refused.
func unknownFlagMessage(path, name string) string {
	command := strings.TrimPrefix(path, "lockbench ")
	if why := setByCommand(command, name); why != "" {
		return fmt.Sprintf("%s: %s; see %s --help", dashed(name), why, path)
	}
	if isRunFlagName(name) {
		return fmt.Sprintf("%s: %s decides it itself; see %s --help for its flags", dashed(name), command, path)
	}
	return fmt.Sprintf("unknown flag %s for %s; see %s --help", dashed(name), path, path)
}

// setByCommand explains run flags that a command leaves out because it sets
// them itself ("" when the command has no such reason for name).
func setByCommand(command, name string) string {
	reasons := map[string]map[string]string{
		"lock-cost": {
			"topology": "lock-cost takes each lock's topology with it, --lock NAME@TOPOLOGY (e.g. --lock redlock@redlock:5)",
			"fault":    "lock-cost puts each topology's canonical fault in itself with --with-fault",
		},
		"redlock-cost": {
			"topology": "redlock-cost runs single and redlock:N itself; choose N with --masters 3,5,7 or give --redis URLs",
			"lock":     "redlock-cost compares single and redlock; for other locks use lockbench lock-cost --lock NAME[@TOPOLOGY]",
			"fault":    "redlock-cost kills one master itself; for other faults use lockbench run --fault",
		},
	}
	return reasons[command][name]
}

// invalidValueMessage rewrites flag.FlagSet's `invalid value "V" for flag
// -NAME: WHY`. A WHY that already names the flag stands alone; the parser's
// bare "parse error" becomes what the flag accepts.
func invalidValueMessage(c *cli.Context, rest, whole string) string {
	value, after, ok := strings.Cut(rest, " for flag -")
	if !ok {
		return whole
	}
	name, why, ok := strings.Cut(after, ": ")
	if !ok {
		return whole
	}
	if strings.HasPrefix(why, "--") || strings.HasPrefix(why, "-"+name+" ") {
		return why
	}
	if f := findFlag(c.Command.Flags, name); f != nil {
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			why = "want a whole number"
		case *cli.Float64Flag:
			why = "want a number"
		case *cli.BoolFlag:
			why = "want true or false"
		case *cli.DurationFlag:
			why = "want a duration such as 500ms or 2s"
		}
	}
	return fmt.Sprintf("%s %s: %s", dashed(name), value, why)
}

// unknownSubcommand is the action of a command that only groups others
// (results, scenario, k8s, image): without a name it is bad input that says
// what it needs (help is --help's), and a name it does not have is refused
// with the nearest it has.
func unknownSubcommand(c *cli.Context) error {
	path := commandPath(c)
	short := strings.TrimPrefix(path, c.App.Name+" ")
	where := path + " --help"
	what := "a command"
	if c.Command.Command("list") != nil {
		where, what = path+" list", "a name"
	}
	names := commandNames(c.Command.Subcommands)
	if c.NArg() == 0 {
		// A list command is where the names are, not one of them.
		listed := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "list" })
		return usageError{msg: fmt.Sprintf("%s needs %s: %s; see %s", short, what, suggest.List(listed), where)}
	}
	name := c.Args().First()
	hint := ""
	if near, ok := suggest.Nearest(name, names); ok {
		hint = "did you mean " + near + "? "
	}
	return usageError{msg: fmt.Sprintf("%s %s: no such command; %ssee %s", short, name, hint, where)}
}

// unknownCommand is the top level's action: help without arguments, one line
// for a command that does not exist, with the nearest that does.
func unknownCommand(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowAppHelp(c)
	}
	return usageError{msg: unknownCommandMessage(c.App, c.Args().First())}
}

// unknownCommandMessage refuses a top-level command name.
func unknownCommandMessage(app *cli.App, name string) string {
	if near, ok := suggest.Nearest(name, commandNames(app.Commands)); ok {
		return fmt.Sprintf("unknown command %q; did you mean %s? see %s help", name, near, app.Name)
	}
	return fmt.Sprintf("unknown command %q; see %s help", name, app.Name)
}

// commandNames are the names a user may type among cmds, help left out.
func commandNames(cmds []*cli.Command) []string {
	var out []string
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			out = append(out, c.Name)
		}
	}
	return out
}

// isRunFlagName says whether name (or alias, as -c) is one of run's flags.
func isRunFlagName(name string) bool {
	for _, f := range plan.RunFlags() {
		if f.Name == name || slices.Contains(f.Aliases, name) {
			return true
		}
	}
	return false
}
