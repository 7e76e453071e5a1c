package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/bench/plan"
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
		return fmt.Sprintf("%s: %s decides it itself and does not take it; see %s --help for the flags it takes", dashed(name), command, path)
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
			"topology": "redlock-cost runs single and redlock:N itself; choose N with --masters 3,5,7, or give the masters as --redis URLs",
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
// (results, scenario, k8s, image): with no argument it shows its help; with
// one it is not a command it has, it says so and where the names are.
func unknownSubcommand(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowSubcommandHelp(c)
	}
	path := commandPath(c)
	where := path + " --help"
	if c.Command.Command("list") != nil {
		where = path + " list"
	}
	return usageError{msg: fmt.Sprintf("%s %s: no such command; see %s", strings.TrimPrefix(path, c.App.Name+" "), c.Args().First(), where)}
}

// unknownCommand is the top level's action: help without arguments, one line
// for a command that does not exist.
func unknownCommand(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowAppHelp(c)
	}
	return usageError{msg: fmt.Sprintf("unknown command %q; see %s help", c.Args().First(), c.App.Name)}
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
