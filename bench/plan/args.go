package plan

import "sort"

// Args renders v as the command line of lockbench run that gives the same
// values: --name=value for each value, in name order (a repeated flag's
// values in their order), so that a run made from Values elsewhere (a trial
// in a Swarm task) parses to the values it was given. The = form keeps a
// value that starts with '-' a value.
func (v Values) Args() []string {
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names)
	var args []string
	for _, name := range names {
		for _, value := range v[name] {
			args = append(args, "--"+name+"="+value)
		}
	}
	return args
}
