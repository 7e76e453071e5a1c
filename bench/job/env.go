package job

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Variables a generator reads before its flags, set by an engine.
const (
	// EnvFileVar names a file of KEY=VALUE lines (a mounted Docker secret)
	// whose LOCKBENCH_* variables are set as if given in the environment.
	EnvFileVar = "LOCKBENCH_ENV_FILE"
	// SwarmSlotVar and SwarmNodeVar carry a Swarm task's {{.Task.Slot}} and
	// {{.Node.ID}}. Swarm numbers a replicated job's tasks 0 to N-1 but
	// renders slot 0 as the node's id (the template treats 0 as "no slot",
	// as for global services), so the generator id is the slot, or 0 where
	// the slot is the node's id.
	SwarmSlotVar = "LOCKBENCH_SWARM_SLOT"
	SwarmNodeVar = "LOCKBENCH_SWARM_NODE"
)

// Environment is the process environment ApplyEnvironment reads and sets.
type Environment struct {
	Lookup func(string) (string, bool)
	Set    func(string, string) error
}

// ProcessEnvironment is the real one.
func ProcessEnvironment() Environment { return Environment{Lookup: os.LookupEnv, Set: os.Setenv} }

// ApplyEnvironment turns what an engine gave a generator into the LOCKBENCH_*
// variables its flags read: the variables of EnvFileVar's file, and the
// generator id from a Swarm task's slot. A variable set both ways is refused:
// one of the two would be ignored.
func ApplyEnvironment(env Environment) error {
	if path, ok := env.Lookup(EnvFileVar); ok && path != "" {
		if err := applyEnvFile(env, path); err != nil {
			return err
		}
	}
	slot, ok := env.Lookup(SwarmSlotVar)
	if !ok {
		return nil
	}
	node, _ := env.Lookup(SwarmNodeVar)
	id, err := SlotGeneratorID(slot, node)
	if err != nil {
		return err
	}
	return setOnce(env, GeneratorIDEnv, strconv.Itoa(id), SwarmSlotVar)
}

// SlotGeneratorID maps a Swarm replicated job's task slot, as the
// {{.Task.Slot}} template renders it, to the generator id.
func SlotGeneratorID(slot, node string) (int, error) {
	if slot != "" && slot == node {
		return 0, nil // slot 0, rendered as the node's id
	}
	n, err := strconv.Atoi(slot)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a task slot number (or the node's id, %s)", SwarmSlotVar, slot, SwarmNodeVar)
	}
	return n, nil
}

func applyEnvFile(env Environment, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", EnvFileVar, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(k, "LOCKBENCH_") || k == EnvFileVar {
			// The line may hold a password: name only where it is.
			return fmt.Errorf("%s %s line %d: want LOCKBENCH_NAME=VALUE", EnvFileVar, path, n)
		}
		if err := setOnce(env, k, v, EnvFileVar); err != nil {
			return err
		}
	}
	return sc.Err()
}

// setOnce sets k unless the environment already has it.
func setOnce(env Environment, k, v, from string) error {
	if old, ok := env.Lookup(k); ok && old != v {
		return fmt.Errorf("%s is set both in the environment and by %s; give it once", k, from)
	}
	return env.Set(k, v)
}
