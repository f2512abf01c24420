package main

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
)

// Kinds of idle-stream target.
const (
	// idleA2A is the module: SubscribeToTask streams on auth-required
	// tasks the generator creates first.
	idleA2A = "a2a"
	// idleHold is any server that answers the same POST with one SSE
	// comment, holdComment, and then holds the response open: the floor
	// the module's streams are compared with (bench/cmd/holdcaddy), or a
	// reference such as Caddy's reverse_proxy in front of the bench
	// upstream's /hold.
	idleHold = "hold"
)

// holdComment is the first line of a hold stream (bench/cmd/upstream
// and bench/cmd/holdcaddy write it).
const holdComment = ": hold"

// idleTarget is one server whose idle streams are measured.
type idleTarget struct {
	name, kind, url string
	addr            string // host:port of url, where a started server must listen
	// pid is a running server; without it, argv starts a fresh server for
	// each protocol.
	pid  int
	argv []string
}

// idleTargetFlags collects repeated -t flags of the idle command.
type idleTargetFlags []*idleTarget

func (f *idleTargetFlags) String() string { return fmt.Sprint(len(*f), " targets") }

func (f *idleTargetFlags) Set(s string) error {
	t, err := parseIdleTarget(s)
	if err != nil {
		return err
	}
	*f = append(*f, t)
	return nil
}

// parseIdleTarget reads name=…,kind=a2a|hold,url=…[,pid=…].
func parseIdleTarget(s string) (*idleTarget, error) {
	t := &idleTarget{}
	err := eachKV(s, func(k, v string) (err error) {
		switch k {
		case "name":
			t.name = v
		case "kind":
			if v != idleA2A && v != idleHold {
				err = fmt.Errorf("kind %q: want %s or %s", v, idleA2A, idleHold)
			}
			t.kind = v
		case "url":
			var u *url.URL
			if u, err = url.Parse(v); err == nil {
				t.url, t.addr = v, u.Host
			}
		case "pid":
			t.pid, err = strconv.Atoi(v)
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if t.name == "" || t.kind == "" || t.url == "" {
		return nil, fmt.Errorf("target %q: name, kind and url are required", s)
	}
	return t, nil
}

// assignCommands gives each target without a pid its server command, in
// order: the commands are what follows the flags, separated by "--".
func assignCommands(targets []*idleTarget, args []string) error {
	var cmds [][]string
	if len(args) > 0 {
		start := 0
		for i := 0; i <= len(args); i++ {
			if i < len(args) && args[i] != "--" {
				continue
			}
			if i == start {
				return errors.New("an empty server command (two \"--\" in a row, or one at the end)")
			}
			cmds = append(cmds, args[start:i])
			start = i + 1
		}
	}
	need := 0
	for _, t := range targets {
		if t.pid == 0 {
			need++
		}
	}
	if len(cmds) != need {
		return fmt.Errorf("%d targets without a pid, %d server commands: want one command each", need, len(cmds))
	}
	for _, t := range targets {
		if t.pid == 0 {
			t.argv, cmds = cmds[0], cmds[1:]
		}
	}
	return nil
}

// fileSafe makes a target name usable in a file name.
var fileSafe = regexp.MustCompile(`[^A-Za-z0-9.]+`)
