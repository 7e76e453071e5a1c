package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/compose"
)

// imageCommand builds the local images for engines without a registry:
// Redis (the default) and lockbench itself.
func imageCommand() *cli.Command {
	return &cli.Command{
		Name:  "image",
		Usage: "container images for --provider docker, compose/docker/ and lockbench swarm job",
		Subcommands: []*cli.Command{{
			Name: "build",
			Usage: "assemble a FROM scratch image of this machine's redis-server and the libraries it links, " +
				"for a Docker engine that cannot pull " + compose.DefaultImage + "; build lockbench makes the lockbench image",
			UsageText: "lockbench image build [--tag " + compose.LocalImage + "] [--redis-server PATH]\n" +
				"lockbench image build lockbench [--tag " + compose.LockbenchImage + "] [--binary PATH]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "tag", Value: compose.LocalImage, Usage: "the image's name"},
				&cli.StringFlag{Name: "redis-server", Usage: "the redis-server binary to copy (default: the one on PATH)"},
				quietFlag,
			},
			Action: imageBuildRedis,
			Subcommands: []*cli.Command{{
				Name: "lockbench",
				Usage: "assemble a FROM scratch image of a static lockbench build (CGO_ENABLED=0), " +
					"the generators' image for lockbench swarm job on an engine without a registry",
				UsageText: "lockbench image build lockbench [--tag " + compose.LockbenchImage + "] [--binary PATH]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "tag", Value: compose.LockbenchImage, Usage: "the image's name"},
					&cli.StringFlag{Name: "binary", Usage: "the static lockbench binary to copy (default: this one, if it is static)"},
					quietFlag,
				},
				Action: imageBuildLockbench,
			}, {
				Name: "trial",
				Usage: "assemble a FROM scratch image of a static lockbench and this machine's redis-server with its libraries, " +
					"the image of scenario --engine swarm (each trial a task with its servers inside)",
				UsageText: "lockbench image build trial [--tag " + compose.TrialImage + "] [--binary PATH]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "tag", Value: compose.TrialImage, Usage: "the image's name"},
					&cli.StringFlag{Name: "binary", Usage: "the static lockbench binary to copy (default: this one, if it is static)"},
					quietFlag,
				},
				Action: imageBuildTrial,
			}},
		}},
	}
}

var quietFlag = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the tag"}

// checkExecutable refuses a path that is not an executable file.
func checkExecutable(flag, p string) error {
	if p == "" {
		return nil
	}
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return usageError{msg: fmt.Sprintf("--%s %q: want the path of an executable file", flag, p)}
	}
	return nil
}

func imageBuildRedis(c *cli.Context) error {
	if err := checkExecutable("redis-server", c.String("redis-server")); err != nil {
		return err
	}
	opts := compose.ImageOptions{Tag: c.String("tag"), RedisServer: c.String("redis-server")}
	if !c.Bool("quiet") {
		opts.Log = c.App.ErrWriter
	}
	info, err := compose.BuildLocalImage(c.Context, opts)
	if err != nil {
		return err
	}
	return printBuilt(c, info, fmt.Sprintf("lockbench run --provider docker --image %s …  or  LOCKBENCH_REDIS_IMAGE=%s docker-compose -f compose/docker/single.yml up -d", info.Tag, info.Tag))
}

func imageBuildLockbench(c *cli.Context) error {
	// Flags before the word lockbench belong to the redis build and would be
	// ignored here.
	if set := c.Lineage()[1].LocalFlagNames(); len(set) > 0 {
		return usageError{msg: fmt.Sprintf("image build lockbench: --%s came before lockbench, where it is the redis image's; give it after (image build lockbench --tag … --binary …)", set[0])}
	}
	if err := checkExecutable("binary", c.String("binary")); err != nil {
		return err
	}
	opts := compose.LockbenchImageOptions{Tag: c.String("tag"), Binary: c.String("binary")}
	if !c.Bool("quiet") {
		opts.Log = c.App.ErrWriter
	}
	info, err := compose.BuildLockbenchImage(c.Context, opts)
	if err != nil {
		if errors.Is(err, compose.ErrNotStatic) && c.IsSet("binary") {
			return usageError{msg: "--binary " + err.Error()}
		}
		return err
	}
	return printBuilt(c, info, fmt.Sprintf("lockbench swarm job --generators 4 --image %s -- --redis redis://HOST:6379 …", info.Tag))
}

func printBuilt(c *cli.Context, info compose.ImageInfo, use string) error {
	if c.Bool("quiet") {
		_, err := fmt.Fprintln(c.App.Writer, info.Tag)
		return err
	}
	_, err := fmt.Fprintf(c.App.Writer, "built %s (%s, %.1f MB, %d files from this machine)\nuse it: %s\n",
		info.Tag, shortImageID(info.ID), float64(info.Size)/1e6, len(info.Files), use)
	return err
}

func shortImageID(id string) string {
	if len(id) > 19 {
		return id[:19]
	}
	return id
}

func imageBuildTrial(c *cli.Context) error {
	if set := c.Lineage()[1].LocalFlagNames(); len(set) > 0 {
		return usageError{msg: fmt.Sprintf("image build trial: --%s came before trial, where it is the redis image's; give it after (image build trial --tag … --binary …)", set[0])}
	}
	if err := checkExecutable("binary", c.String("binary")); err != nil {
		return err
	}
	opts := compose.TrialImageOptions{Tag: c.String("tag"), Binary: c.String("binary")}
	if !c.Bool("quiet") {
		opts.Log = c.App.ErrWriter
	}
	info, err := compose.BuildTrialImage(c.Context, opts)
	if err != nil {
		if errors.Is(err, compose.ErrNotStatic) && c.IsSet("binary") {
			return usageError{msg: "--binary " + err.Error()}
		}
		return err
	}
	return printBuilt(c, info, fmt.Sprintf("lockbench scenario naive-release --engine swarm --engine-image %s", info.Tag))
}
