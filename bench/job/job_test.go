package job

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

func spec() Spec {
	return Spec{Name: "lb", RunID: "r1", Generators: 4, Image: "lockbench/lockbench:test",
		StartAt: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), RunFlags: []string{"--redis", "redis://redis:6379", "--keys", "1"}}
}

func TestArgs(t *testing.T) {
	args := strings.Join(spec().Args(), " ")
	for _, want := range []string{"run --redis redis://redis:6379 --keys 1", "--run-id r1", "--generators 4",
		"--start-at 2026-12-02T10:00:00Z", "--metrics-addr :9464", "--format marked", "--out /tmp/runs"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--generator-id") {
		t.Errorf("args %q name a generator id; it comes from %s", args, GeneratorIDEnv)
	}
}

func TestSpecRefuses(t *testing.T) {
	for name, mutate := range map[string]func(s *Spec){
		"no generators":      func(s *Spec) { s.Generators = 0 },
		"bad name":           func(s *Spec) { s.Name = "Bad_Name" },
		"no image":           func(s *Spec) { s.Image = "" },
		"a flag it sets":     func(s *Spec) { s.RunFlags = append(s.RunFlags, "--run-id", "x") },
		"a password":         func(s *Spec) { s.RunFlags = []string{"--redis", "redis://:hunter2secret@redis:6379"} },
		"a flag it sets (=)": func(s *Spec) { s.RunFlags = append(s.RunFlags, "--generator-id=1") },
		"a secret variable":  func(s *Spec) { s.Secret = map[string]string{"PATH": "x"} },
	} {
		s := spec()
		mutate(&s)
		err := s.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("%s: the error repeats the password: %v", name, err)
		}
	}
	if err := spec().Validate(); err != nil {
		t.Errorf("a good spec: %v", err)
	}
}

func TestMoveSecrets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  []string
		left   string
		secret string
		bad    bool
	}{
		{name: "none", flags: []string{"--redis", "redis://a:6379", "-c", "2"}, left: "--redis redis://a:6379 -c 2", secret: ""},
		{name: "spaced", flags: []string{"--redis", "redis://:pw1@a:6379", "-c", "2"}, left: "-c 2",
			secret: "LOCKBENCH_REDIS=redis://:pw1@a:6379\n"},
		{name: "inline and repeated", flags: []string{"--redis=redis://:pw1@a:6379", "--redis", "redis://b:6379", "--resource", "redis://:pw2@r:6379", "--keys", "1"},
			left: "--keys 1", secret: "LOCKBENCH_REDIS=redis://:pw1@a:6379,redis://b:6379\nLOCKBENCH_RESOURCE=redis://:pw2@r:6379\n"},
		{name: "not a URL flag", flags: []string{"--label", "redis://:pw1@a:6379"}, left: "--label redis://:pw1@a:6379", bad: true},
		{name: "a comma", flags: []string{"--redis", "redis://:p,w@a:6379"}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			s.RunFlags = tc.flags
			got, err := s.MoveSecrets()
			if err == nil {
				err = got.Validate()
			}
			if tc.bad {
				if err == nil {
					t.Fatalf("accepted: %v %v", got.RunFlags, got.Secret)
				}
				if strings.Contains(err.Error(), "pw1") || strings.Contains(err.Error(), "p,w") {
					t.Errorf("the error repeats the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l := strings.Join(got.RunFlags, " "); l != tc.left {
				t.Errorf("run flags %q, want %q", l, tc.left)
			}
			if f := string(got.SecretFile()); f != tc.secret {
				t.Errorf("secret file %q, want %q", f, tc.secret)
			}
		})
	}
}

func TestMarkedResultsRoundTrip(t *testing.T) {
	var logs bytes.Buffer
	logs.WriteString("starting\n")
	long := strings.Repeat("é[", 5000) // longer than a line, runes and brackets at the cuts
	for _, id := range []string{"r1-g0", "r1-g1"} {
		var one bytes.Buffer
		if err := WriteMarked(&one, &results.Result{Schema: results.Schema, ID: id, Label: long}); err != nil {
			t.Fatal(err)
		}
		// kubectl logs --prefix puts the pod's name before every line.
		for _, line := range strings.SplitAfter(one.String(), "\n") {
			if len(line) > markedLine+1 {
				t.Fatalf("a line of %d bytes", len(line))
			}
			if line != "" {
				logs.WriteString("[pod/lb-" + id + "/lockbench] " + line)
			}
		}
	}
	rs, err := Collect(&logs)
	if err != nil || len(rs) != 2 || rs[1].ID != "r1-g1" || rs[0].Label != long {
		t.Fatalf("Collect = %d results, %v", len(rs), err)
	}
	if _, err := Collect(strings.NewReader(BeginMarker + "\n{\"schema\":")); err == nil {
		t.Error("a result cut off by the end of the logs was accepted")
	}
}

func FuzzCollect(f *testing.F) {
	f.Add(BeginMarker + "\n{}\n" + EndMarker + "\n")
	f.Add("[pod/x] " + BeginMarker + "\n[pod/x] {\"schema\":\"lockbench/v1\",\"id\":\"a\"}\n[pod/x] " + EndMarker)
	f.Fuzz(func(t *testing.T, logs string) {
		rs, _ := Collect(strings.NewReader(logs))
		for _, r := range rs {
			if r.Schema != results.Schema || r.ID == "" {
				t.Fatalf("collected %+v", r)
			}
		}
	})
}

func TestSlotGeneratorID(t *testing.T) {
	for _, tc := range []struct {
		slot, node string
		want       int
		bad        bool
	}{
		{slot: "3", node: "n1", want: 3},
		{slot: "n1", node: "n1", want: 0},
		{slot: "n2", node: "n1", bad: true},
		{slot: "-1", node: "n1", bad: true},
		{slot: "", node: "", bad: true},
	} {
		got, err := SlotGeneratorID(tc.slot, tc.node)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("SlotGeneratorID(%q, %q) = %d, %v", tc.slot, tc.node, got, err)
		}
	}
}

func FuzzEnvFile(f *testing.F) {
	f.Add("LOCKBENCH_REDIS=redis://:pw@a:6379\n# c\n\nLOCKBENCH_KEYS=1\n")
	f.Add("PATH=/bin\n")
	f.Fuzz(func(t *testing.T, content string) {
		path := t.TempDir() + "/env"
		if err := writeFile(path, content); err != nil {
			t.Skip()
		}
		set := map[string]string{}
		env := Environment{
			Lookup: func(k string) (string, bool) {
				if k == EnvFileVar {
					return path, true
				}
				v, ok := set[k]
				return v, ok
			},
			Set: func(k, v string) error { set[k] = v; return nil },
		}
		err := ApplyEnvironment(env)
		for k := range set {
			if !strings.HasPrefix(k, "LOCKBENCH_") || k == EnvFileVar {
				t.Fatalf("set %s", k)
			}
		}
		if err != nil && strings.Contains(err.Error(), "=") && strings.Contains(content, err.Error()) {
			t.Fatalf("the error repeats the file: %v", err)
		}
	})
}

func TestApplyEnvironment(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/good"
	if err := writeFile(good, "# secrets\nLOCKBENCH_REDIS=redis://:pw@a:6379,redis://:pw@b:6379\n\nLOCKBENCH_RESOURCE=redis://:pw@r:6379\n"); err != nil {
		t.Fatal(err)
	}
	bad := dir + "/bad"
	if err := writeFile(bad, "REDIS=redis://:secretpw@a:6379\n"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		given map[string]string
		want  map[string]string
		bad   bool
	}{
		{name: "nothing", given: map[string]string{}, want: map[string]string{}},
		{name: "env file and slot", given: map[string]string{EnvFileVar: good, SwarmSlotVar: "node7", SwarmNodeVar: "node7"},
			want: map[string]string{"LOCKBENCH_REDIS": "redis://:pw@a:6379,redis://:pw@b:6379", "LOCKBENCH_RESOURCE": "redis://:pw@r:6379", GeneratorIDEnv: "0"}},
		{name: "slot 2", given: map[string]string{SwarmSlotVar: "2", SwarmNodeVar: "node7"}, want: map[string]string{GeneratorIDEnv: "2"}},
		{name: "set twice", given: map[string]string{SwarmSlotVar: "2", GeneratorIDEnv: "1"}, bad: true},
		{name: "missing file", given: map[string]string{EnvFileVar: dir + "/none"}, bad: true},
		{name: "not lockbench's", given: map[string]string{EnvFileVar: bad}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tc.given {
				env[k] = v
			}
			err := ApplyEnvironment(Environment{
				Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				Set:    func(k, v string) error { env[k] = v; return nil },
			})
			if tc.bad {
				if err == nil {
					t.Fatal("accepted")
				}
				if strings.Contains(err.Error(), "secretpw") {
					t.Errorf("the error repeats the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if env[k] != v {
					t.Errorf("%s = %q, want %q", k, env[k], v)
				}
			}
		})
	}
}

func FuzzMoveSecrets(f *testing.F) {
	f.Add("--redis\x00redis://:pw@a:6379\x00-c\x002")
	f.Add("--redis=redis://:pw@a:6379\x00--resource\x00redis://:x@r:1\x00--redis")
	f.Fuzz(func(t *testing.T, joined string) {
		s := spec()
		s.RunFlags = strings.Split(joined, "\x00")
		got, err := s.MoveSecrets()
		if err != nil {
			return
		}
		if got.Validate() != nil {
			return
		}
		for _, tok := range got.RunFlags {
			if hasPassword(tok) {
				t.Fatalf("a password stayed on the command line: %q", got.RunFlags)
			}
		}
		for k := range got.Secret {
			if !strings.HasPrefix(k, "LOCKBENCH_") {
				t.Fatalf("secret variable %s", k)
			}
		}
	})
}
