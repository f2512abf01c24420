package caddya2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/cli"
)

// The card `caddy a2a serve` fills in when no flag says otherwise.
const (
	serveDescription = "An agent served by caddy-a2a"
	serveSkillID     = "chat"
	serveSkillTag    = "general"
)

// docsFooter ends the help of `caddy a2a` and its commands, in place of
// Caddy's own footer: caddyserver.com does not document them.
const docsFooter = `Full documentation is available at:
https://github.com/caddy-a2a/caddy-a2a#readme`

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "a2a",
		Usage: "serve|card|send|tasks|cancel …",
		Short: "Serve an agent over A2A, or talk to any A2A server",
		Long: `
Commands for the A2A (Agent2Agent) protocol.

  serve   puts an agent behind an A2A endpoint with a card, in one line
  card    fetches any A2A server's card, prints it and checks it
  send    sends a message to any A2A server and prints the answer
  tasks   lists your tasks on an A2A server
  cancel  cancels a task

The client commands read the server's card (a base URL finds
/.well-known/agent-card.json) and speak the newest protocol version and
binding it offers (JSON-RPC, else HTTP+JSON), or the one --version picks.
`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.SetHelpTemplate((&cobra.Command{}).HelpTemplate() + "\n" + docsFooter + "\n")
			cmd.AddCommand(serveCommand(), cardCommand(), sendCommand(), tasksCommand(), cancelCommand())
		},
	})
}

// serveFlags are the settings of `caddy a2a serve`.
type serveFlags struct {
	from, to, kind, model, name, description string
	skills                                   []string
	accessLog, debug, inspector              bool
}

func serveCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --to <upstream-url> [--from <addr>] [--kind http|a2a|openai] [--model <m>] [--name <n>] [--description <d>] [--skill id[:name[:description]]]… [--inspector] [--access-log] [--debug]",
		Short: "An A2A endpoint with a card in front of an agent, in one line",
		Long: `
Serves an A2A endpoint (JSON-RPC, A2A 0.3 and 1.0, streaming, tasks) and
its public Agent Card in front of the agent at --to, without a Caddyfile.

--kind says what the agent is: http (the default) is a service written
to caddy-a2a's agent contract, a2a an existing A2A agent (its card's
fields become this card's), openai an OpenAI-compatible chat completions
server (--to is its base URL, such as http://127.0.0.1:11434/v1; --model
names the model; the OPENAI_API_KEY environment variable, when set, is
sent as its key).

--from is handled as caddy reverse-proxy handles it: a bare port (or
port 80) is served over HTTP, an address with a hostname gets automatic
HTTPS. Default: :8080.

The card's name is --name, else the upstream's host; its description
--description, else "An agent served by caddy-a2a"; its skills one per
--skill (id[:name[:description]], split on the first two colons; the
skill is tagged with its id), else one skill "chat" tagged "general".

--inspector serves the inspector page (the card, a chat with the agent,
your tasks and the raw frames) at /a2a/inspector.

It prints the card URL, the JSON-RPC URL (and the inspector's), and
serves until stopped.
`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.from, "from", "f", ":8080", "Address on which to serve the endpoint")
	fl.StringVarP(&f.to, "to", "t", "", "URL of the agent (required)")
	fl.StringVar(&f.kind, "kind", "http", "What the agent is: http, a2a or openai")
	fl.StringVar(&f.model, "model", "", "The model (kind openai)")
	fl.StringVar(&f.name, "name", "", "The card's name (default: the upstream's host)")
	fl.StringVar(&f.description, "description", "", "The card's description")
	fl.StringArrayVar(&f.skills, "skill", nil, "A skill of the card, id[:name[:description]] (repeatable)")
	fl.BoolVar(&f.inspector, "inspector", false, "Serve the inspector page at /a2a/inspector")
	fl.BoolVar(&f.accessLog, "access-log", false, "Enable the access log")
	fl.BoolVarP(&f.debug, "debug", "v", false, "Enable verbose debug logs")
	return cmd
}

func runServe(f serveFlags) error {
	caddy.TrapSignals()
	cfg, urls, err := serveConfig(f)
	if err != nil {
		return err
	}
	if err := caddy.Run(cfg); err != nil {
		return err
	}
	caddy.Log().Info("caddy a2a serving", zap.String("from", f.from), zap.String("to", f.to), zap.String("kind", f.kind))
	fmt.Printf("Agent card: %s\nJSON-RPC:   %s\n", urls.card, urls.rpc)
	if urls.inspector != "" {
		fmt.Printf("Inspector:  %s\n", urls.inspector)
	}
	select {}
}

// serveURLs are where `caddy a2a serve` answers.
type serveURLs struct{ card, rpc, inspector string }

// serveConfig is the whole Caddy config of `caddy a2a serve`: one server
// with one route to the a2a handler, built as caddy reverse-proxy builds
// its own (the same reading of --from), and the URLs it answers at.
func serveConfig(f serveFlags) (*caddy.Config, serveURLs, error) {
	if f.to == "" {
		return nil, serveURLs{}, errors.New("--to is required")
	}
	to, err := url.Parse(f.to)
	if err != nil || (to.Scheme != "http" && to.Scheme != "https") || to.Host == "" {
		return nil, serveURLs{}, fmt.Errorf("--to %q: want the agent's http:// or https:// URL", f.to)
	}
	from, err := httpcaddyfile.ParseAddress(f.from)
	if err != nil {
		return nil, serveURLs{}, fmt.Errorf("--from %q: %v", f.from, err)
	}
	if from.Path != "" {
		return nil, serveURLs{}, fmt.Errorf("--from %q: paths are not allowed", f.from)
	}
	httpPort, httpsPort := strconv.Itoa(caddyhttp.DefaultHTTPPort), strconv.Itoa(caddyhttp.DefaultHTTPSPort)
	if from.Scheme == "" {
		if from.Port == httpPort || from.Host == "" {
			from.Scheme = "http"
		} else {
			from.Scheme = "https"
		}
	}
	if from.Port == "" {
		from.Port = httpPort
		if from.Scheme == "https" {
			from.Port = httpsPort
		}
	}

	up := map[string]any{"kind": f.kind, "url": f.to}
	switch f.kind {
	case "http", "a2a":
	case "openai":
		up["model"] = f.model
		if os.Getenv("OPENAI_API_KEY") != "" {
			up["api_key"] = "{env.OPENAI_API_KEY}"
		}
	default:
		return nil, serveURLs{}, fmt.Errorf("--kind %q: want http, a2a or openai", f.kind)
	}
	if f.model != "" && f.kind != "openai" {
		return nil, serveURLs{}, errors.New("--model is for --kind openai")
	}
	h := Handler{UpstreamRaw: caddyconfig.JSON(up, nil), CardFields: CardFields{Name: f.name, Description: f.description}}
	if f.inspector {
		h.Inspector = &Inspector{}
	}
	if f.kind != "a2a" { // a gateway's card fields default to its agent's
		if h.Name == "" {
			h.Name = to.Hostname()
		}
		if h.Description == "" {
			h.Description = serveDescription
		}
		h.Skills = []Skill{{ID: serveSkillID, Name: "Chat", Description: "Talk with the agent", Tags: []string{serveSkillTag}}}
	}
	if len(f.skills) > 0 {
		h.Skills = nil
		for _, s := range f.skills {
			sk, err := parseSkillFlag(s)
			if err != nil {
				return nil, serveURLs{}, err
			}
			h.Skills = append(h.Skills, sk)
		}
	}

	route := caddyhttp.Route{HandlersRaw: []json.RawMessage{caddyconfig.JSONModuleObject(h, "handler", "a2a", nil)}}
	if from.Host != "" {
		route.MatcherSetsRaw = []caddy.ModuleMap{{"host": caddyconfig.JSON(caddyhttp.MatchHost{from.Host}, nil)}}
	}
	server := &caddyhttp.Server{Routes: caddyhttp.RouteList{route}, Listen: []string{":" + from.Port}}
	if f.accessLog {
		server.Logs = &caddyhttp.ServerLogConfig{}
	}
	if from.Scheme == "http" {
		server.AutoHTTPS = &caddyhttp.AutoHTTPSConfig{Disabled: true}
	}
	persist := false
	cfg := &caddy.Config{
		Admin:   &caddy.AdminConfig{Disabled: true, Config: &caddy.ConfigSettings{Persist: &persist}},
		AppsRaw: caddy.ModuleMap{"http": caddyconfig.JSON(caddyhttp.App{Servers: map[string]*caddyhttp.Server{"a2a": server}}, nil)},
	}
	if f.debug {
		cfg.Logging = &caddy.Logging{Logs: map[string]*caddy.CustomLog{"default": {BaseLog: caddy.BaseLog{Level: zap.DebugLevel.CapitalString()}}}}
	}
	host := from.Host
	if host == "" {
		host = "localhost"
	}
	base := from.Scheme + "://" + host
	if !(from.Scheme == "http" && from.Port == httpPort) && !(from.Scheme == "https" && from.Port == httpsPort) {
		base += ":" + from.Port
	}
	urls := serveURLs{card: base + DefaultCardPath, rpc: base + DefaultRPCPath}
	if f.inspector {
		urls.inspector = urls.rpc + "/inspector"
	}
	return cfg, urls, nil
}

// parseSkillFlag reads --skill id[:name[:description]], split on the
// first two colons only (a description may hold more); the name
// defaults to the id, the description to the name, the tag to the id.
func parseSkillFlag(s string) (Skill, error) {
	parts := strings.SplitN(s, ":", 3)
	sk := Skill{ID: strings.TrimSpace(parts[0])}
	if sk.ID == "" {
		return Skill{}, fmt.Errorf("--skill %q: the id (before the first colon) is required", s)
	}
	sk.Name, sk.Description = sk.ID, sk.ID
	if len(parts) > 1 && strings.TrimSpace(parts[1]) != "" {
		sk.Name, sk.Description = strings.TrimSpace(parts[1]), strings.TrimSpace(parts[1])
	}
	if len(parts) > 2 && strings.TrimSpace(parts[2]) != "" {
		sk.Description = strings.TrimSpace(parts[2])
	}
	sk.Tags = []string{sk.ID}
	return sk, nil
}

// clientFlags are the flags every client command has.
type clientFlags struct {
	headers []string
	user    string
	trust   []string
	version string
	json    bool
}

func (c *clientFlags) add(cmd *cobra.Command, jsonHelp string) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&c.headers, "header", "H", nil, "A request header, \"Field: value\" (repeatable)")
	fl.StringVarP(&c.user, "user", "u", "", "HTTP basic credentials, name:password")
	fl.StringArrayVar(&c.trust, "trust-origin", nil, "Send the credentials (--user, -H) to interfaces at this origin too, besides the card's, \"https://host[:port]\" (repeatable)")
	fl.StringVar(&c.version, "version", "", "The protocol version to speak: 0.3 or 1.0 (default: the newest the card offers)")
	fl.BoolVar(&c.json, "json", false, jsonHelp)
}

// options are the cli.Options of the flags; nil with a printed error
// when a flag is malformed.
func (c *clientFlags) options() (*cli.Options, error) {
	o := &cli.Options{Version: c.version, JSON: c.json, Out: os.Stdout, Err: os.Stderr}
	for _, h := range c.headers {
		if err := o.AddHeader(h); err != nil {
			return nil, err
		}
	}
	if err := o.SetUser(c.user); err != nil {
		return nil, err
	}
	for _, t := range c.trust {
		if err := o.TrustOrigin(t); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// runClient runs one client command under a context that Ctrl-C ends
// (and, unless it streams, cli.DefaultTimeout), and exits with its code.
func runClient(c *clientFlags, stream bool, run func(context.Context, *cli.Options) int) error {
	o, err := c.options()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if !stream {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cli.DefaultTimeout)
		defer cancel()
	}
	if code := run(ctx, o); code != cli.ExitOK {
		stop()
		os.Exit(code)
	}
	return nil
}

func cardCommand() *cobra.Command {
	var c clientFlags
	cmd := &cobra.Command{
		Use:   "card <url> [--json] [-H 'Field: value']… [--user name:password] [--trust-origin <origin>]…",
		Short: "Fetch any A2A server's card, print it and say what is wrong with it",
		Long: `
Fetches the Agent Card of any A2A server (caddy-a2a, a2a-go, @a2a-js/sdk,
either protocol version). A URL ending in .json is the card itself; any
other URL is a base under which (and then at whose origin)
/.well-known/agent-card.json is read.

It prints the card's name, description, interfaces (binding, version,
URL, and whether each one answers an A2A request), capabilities, modes,
skills and security, then the problems found: members the card's version
requires that are missing, fields that break the spec's rules, and
interfaces that do not answer. It exits 1 when there is any problem.

--json prints the card document as served (problems go to stderr).
`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClient(&c, false, func(ctx context.Context, o *cli.Options) int { return cli.Card(ctx, o, args[0]) })
		},
	}
	c.add(cmd, "Print the card document as served")
	return cmd
}

func sendCommand() *cobra.Command {
	var c clientFlags
	var so cli.SendOptions
	cmd := &cobra.Command{
		Use:   "send <url> <text> [--stream] [--events] [--task <id>] [--context <id>] [--version 0.3|1.0] [--json] [-H 'Field: value']… [--user name:password] [--trust-origin <origin>]…",
		Short: "Send a message to any A2A server and print the answer",
		Long: `
Sends <text> to the A2A server at <url> (any server: the interface comes
from its card) and prints the answer: the task's artifacts, or the
agent's message. --stream prints the text as it arrives and each status
change on a line of its own; --events streams and prints each event on a
line instead (the task, each status change, each artifact chunk with its
artifact's name or id); --json prints the raw response frames instead.

--task continues a task that waits for input; --context puts the message
in a conversation.

Exit status: 0 the task completed (or the agent answered with a
message); 2 it waits for input or authorization (the command that
continues it is printed: the same --user, -H and --trust-origin, the
secrets masked, and --task <id>); 1 it failed, was canceled or rejected,
or the server answered with an error (printed with its code).
`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			so.Continue = "caddy a2a send " + args[0]
			return runClient(&c, so.Stream || so.Events, func(ctx context.Context, o *cli.Options) int {
				return cli.Send(ctx, o, args[0], args[1], so)
			})
		},
	}
	c.add(cmd, "Print the raw response frames")
	fl := cmd.Flags()
	fl.BoolVar(&so.Stream, "stream", false, "Stream the answer (SendStreamingMessage)")
	fl.BoolVar(&so.Events, "events", false, "Stream the answer and print each event on a line")
	fl.StringVar(&so.TaskID, "task", "", "Continue the task with this id")
	fl.StringVar(&so.ContextID, "context", "", "Send within the context with this id")
	return cmd
}

func tasksCommand() *cobra.Command {
	var c clientFlags
	var to cli.TasksOptions
	cmd := &cobra.Command{
		Use:   "tasks <url> [--context <id>] [--state <state>] [--json] [-H 'Field: value']… [--user name:password] [--trust-origin <origin>]…",
		Short: "List your tasks on an A2A server",
		Long: `
Lists the tasks the server keeps for you (ListTasks, every page): id,
state, when its status last changed, and its context. --context and
--state (submitted, working, input-required, auth-required, completed,
failed, canceled, rejected) filter the list. --json prints the raw
responses. ListTasks is an A2A 1.0 method: a 0.3-only server has none.
`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClient(&c, false, func(ctx context.Context, o *cli.Options) int { return cli.Tasks(ctx, o, args[0], to) })
		},
	}
	c.add(cmd, "Print the raw responses")
	cmd.Flags().StringVar(&to.ContextID, "context", "", "Only the tasks of this context")
	cmd.Flags().StringVar(&to.State, "state", "", "Only the tasks in this state")
	return cmd
}

func cancelCommand() *cobra.Command {
	var c clientFlags
	cmd := &cobra.Command{
		Use:   "cancel <url> <task-id> [--json] [-H 'Field: value']… [--user name:password] [--trust-origin <origin>]…",
		Short: "Cancel a task on an A2A server",
		Long: `
Asks the server to cancel the task and prints the state it reports. A
task that has already ended cannot be canceled: the server's error is
printed with its code and the exit status is 1.
`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClient(&c, false, func(ctx context.Context, o *cli.Options) int { return cli.Cancel(ctx, o, args[0], args[1]) })
		},
	}
	c.add(cmd, "Print the raw response")
	return cmd
}
