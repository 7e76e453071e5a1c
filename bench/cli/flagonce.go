package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// refuseRepeatedFlags refuses a single-valued flag given twice on the command
// line, for every command alike: flag.FlagSet keeps the last value and would
// silently drop the first (`results report -o a.html -o b.html` writing only
// b.html). It walks the arguments as flag.FlagSet parses them, command by
// subcommand, before any command runs; what it cannot read (an unknown flag, a
// missing value) it leaves to the parser, whose message is the right one.
// A flag given in the environment and again on the command line is not
// repeated: the command line overrides the environment.
func refuseRepeatedFlags(c *cli.Context) error {
	cmds, args := c.App.Commands, c.Args().Slice()
	path := []string{c.App.Name}
	for len(args) > 0 {
		cmd := findCommand(cmds, args[0])
		if cmd == nil {
			return nil
		}
		path = append(path, cmd.Name)
		rest, err := scanFlags(strings.Join(path, " "), cmd.Flags, args[1:])
		if err != nil {
			return err
		}
		cmds, args = cmd.Subcommands, rest
	}
	return nil
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, cmd := range cmds {
		if cmd.HasName(name) {
			return cmd
		}
	}
	return nil
}

// scanFlags reads the flags at the head of args with flag.FlagSet's grammar
// (-name, --name, -name=value, or -name value for a flag that takes one; the
// first non-flag or "--" ends them) and returns what follows them.
func scanFlags(command string, flags []cli.Flag, args []string) ([]string, error) {
	given := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			return args[i:], nil
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		f := findFlag(flags, name)
		if f == nil {
			return nil, nil
		}
		if !hasValue && takesValue(f) {
			if i+1 >= len(args) {
				return nil, nil
			}
			i++
			value = args[i]
		}
		if repeatable(f) {
			continue
		}
		canonical := f.Names()[0]
		if first, twice := given[canonical]; twice {
			return nil, usageError{msg: repeatedMessage(command, canonical, first, value, takesValue(f))}
		}
		given[canonical] = value
	}
	return nil, nil
}

func repeatedMessage(command, name, first, second string, takes bool) string {
	if !takes {
		return fmt.Sprintf("%s given twice to %s; give it once", dashed(name), command)
	}
	return fmt.Sprintf("%s given twice to %s (%q, then %q); it takes one value", dashed(name), command, first, second)
}

// dashed writes a flag name as help shows it: -c, --duration.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// takesValue says whether the flag reads the next argument as its value
// (every flag but a switch).
func takesValue(f cli.Flag) bool {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	return true
}

// repeatable says whether the flag collects every value given (--topology,
// --tag, --fault, …).
func repeatable(f cli.Flag) bool {
	s, ok := f.(interface{ IsSliceFlag() bool })
	return ok && s.IsSliceFlag()
}
