// Command loadgen is the benchmark's load generator and measuring tool. Each
// subcommand prints a markdown section to stdout and progress to stderr; it
// exits 1 when a target answered anything wrong, so a broken target can
// never be reported as fast.
//
//	loadgen load   -t name=…,kind=…,url=…,pid=…[,up=…] …   closed-loop req/s, p50/p99, RSS, in interleaved rounds
//	loadgen sends  -t … -n N [-redis host:port]             RSS across N sends (flat with a bounded store?), and the Redis beside it
//	loadgen relay  -direct URL -a2a URL                      upstream chunk → client frame latency
//	loadgen events -direct URL -a2a URL                      events/s through one stream
//	loadgen gwrelay -direct URL -gateway URL -proxy URL      agent chunk → client frame latency, the module's a2a upstream beside reverse_proxy
//	loadgen storerelay -direct URL -memory URL -redis URL   upstream chunk → client frame latency, store memory beside store redis
//	loadgen replicas -direct URL -a URL -b URL               upstream chunk → client frame latency on the replica that runs a task and on another one subscribed through Redis
//	loadgen redisflush -addr host:port                       empties the bench's own Redis (after the load rounds, before the latency runs)
//	loadgen idle   -t …,kind=a2a -t …,kind=hold -proto h1,h2c -- CMD… -- CMD…
//	                                                         RSS of 1k and 10k idle SSE streams, the module's and a baseline's, a fresh server each
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// targetFlags collects repeated -t flags.
type targetFlags []*target

func (f *targetFlags) String() string { return fmt.Sprint(len(*f), " targets") }

func (f *targetFlags) Set(s string) error {
	t, err := parseTarget(s)
	if err != nil {
		return err
	}
	*f = append(*f, t)
	return nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, strings.TrimSpace(usage))
		os.Exit(2)
	}
	cmds := map[string]func([]string) error{
		"load":       cmdLoad,
		"sends":      cmdSends,
		"relay":      cmdRelay,
		"events":     cmdEvents,
		"idle":       cmdIdle,
		"gwrelay":    cmdGatewayRelay,
		"storerelay": cmdStoreRelay,
		"replicas":   cmdReplicas,
		"push":       cmdPush,
		"redisflush": cmdRedisFlush,
	}
	cmd, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprintln(os.Stderr, strings.TrimSpace(usage))
		os.Exit(2)
	}
	if err := cmd(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

const usage = `
usage: loadgen load|sends|relay|events|idle|gwrelay|storerelay|replicas|push|redisflush [flags]   (loadgen <cmd> -h for flags)
`

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ContinueOnError)
}
