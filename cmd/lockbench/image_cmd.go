package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/lockbench/lockbench/compose"
)

// imageCommand builds the local Redis image for engines without a registry.
func imageCommand() *cli.Command {
	return &cli.Command{
		Name:  "image",
		Usage: "container images for --provider docker and compose/docker/",
		Subcommands: []*cli.Command{{
			Name: "build",
			Usage: "assemble a FROM scratch image from this machine's redis-server and the libraries it links, " +
				"for a Docker engine that cannot pull " + compose.DefaultImage,
			UsageText: "lockbench image build [--tag " + compose.LocalImage + "] [--redis-server PATH]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "tag", Value: compose.LocalImage, Usage: "the image's name"},
				&cli.StringFlag{Name: "redis-server", Usage: "the redis-server binary to copy (default: the one on PATH)"},
				&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the tag"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return usageError{msg: fmt.Sprintf("image build takes no arguments, got %q", c.Args().First())}
				}
				if p := c.String("redis-server"); p != "" {
					if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
						return usageError{msg: fmt.Sprintf("--redis-server %q: want the path of an executable redis-server binary", p)}
					}
				}
				opts := compose.ImageOptions{Tag: c.String("tag"), RedisServer: c.String("redis-server")}
				if !c.Bool("quiet") {
					opts.Log = c.App.ErrWriter
				}
				info, err := compose.BuildLocalImage(c.Context, opts)
				if err != nil {
					return err
				}
				if c.Bool("quiet") {
					_, err = fmt.Fprintln(c.App.Writer, info.Tag)
					return err
				}
				_, err = fmt.Fprintf(c.App.Writer, "built %s (%s, %.1f MB, %d files from this machine)\nuse it: lockbench run --provider docker --image %s …  or  LOCKBENCH_REDIS_IMAGE=%s docker-compose -f compose/docker/single.yml up -d\n",
					info.Tag, shortImageID(info.ID), float64(info.Size)/1e6, len(info.Files), info.Tag, info.Tag)
				return err
			},
		}},
	}
}

func shortImageID(id string) string {
	if len(id) > 19 {
		return id[:19]
	}
	return id
}
