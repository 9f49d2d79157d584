package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"

	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/ent"
	_ "github.com/brokerdesk/brokerdesk/ent/runtime" // registers schema hooks and privacy policies
	"github.com/brokerdesk/brokerdesk/tenancy"
)

const usage = `usage: brokerdesk <command> [flags]

server:
  serve                 serve the API (configuration from the environment, see README)
  migrate               apply the database migrations (safe to repeat, safe in parallel)
  dev                   start a private PostgreSQL under .data/, migrate, seed a demo company, serve

operator (DATABASE_URL must name the owner):
  company create --name N [--features leads,customer_portal,...]
  company features --company ID --features a,b,...
  company list
  user create --company ID --email E [--first-name F] [--last-name L] [--role admin|manager|agent]
  key create --company ID [--user ID] --kind secret|publishable --env live|test [--scopes a,b] [--domains d1,d2] [--name N]
  key list [--company ID]
  key deactivate KEY-ID-OR-PREFIX
  key delete KEY-ID-OR-PREFIX
  user set-password --company ID --user ID-OR-EMAIL        (password: first line of stdin)
  oauth-client create --name N --redirect-uri U [--redirect-uri U2] --scopes a,b [--public] [--company ID] [--env live|test]
  oauth-client list
  oauth-client rotate-secret|disable|delete CLIENT-ID
  delegation create --company ID --from USER-ID --to USER-ID [--until RFC3339]
  delegation list --company ID --from USER-ID
  delegation delete --company ID --from USER-ID DELEGATION-ID
  insurer set --vu VU-NUMBER --name N   add or rename an entry of the insurer catalog
  insurer set-email --vu VU-NUMBER --email ADDRESS   where correspondence cases to the insurer go (empty clears)
  insurer list
  ` + mailboxUsage + `
  ` + templateUsage + `
  ` + docTemplateUsage + `
  ` + commissionRuleUsage + `
  ` + pointsUsage + `
  keys rotate-data [--batch N]   re-seal sensitive contact data with the first key of DATA_KEYS

Operator commands print plain text, or JSON with --json.`

// env is what every command gets: configuration source and output streams.
type env struct {
	getenv func(string) string
	stdin  io.Reader // user set-password reads the password here
	stdout io.Writer
	stderr io.Writer
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("no command")
	}
	switch args[0] {
	case "serve":
		return e.serve(ctx)
	case "migrate":
		return e.migrate(ctx)
	case "dev":
		return e.dev(ctx, args[1:])
	case "company":
		return e.company(ctx, args[1:])
	case "user":
		if len(args) > 1 && args[1] == "set-password" {
			return e.setPassword(ctx, args[2:])
		}
		return e.user(ctx, args[1:])
	case "oauth-client":
		return e.oauthClient(ctx, args[1:])
	case "key":
		return e.key(ctx, args[1:])
	case "delegation":
		return e.delegation(ctx, args[1:])
	case "insurer":
		return e.insurer(ctx, args[1:])
	case "mailbox":
		return e.mailbox(ctx, args[1:])
	case "keys":
		return e.keys(ctx, args[1:])
	case "points":
		return e.points(ctx, args[1:])
	case "template":
		return e.template(ctx, args[1:]) // template.go
	case "doc-template":
		return e.docTemplate(ctx, args[1:]) // doctemplate.go
	case "commission-rule":
		return e.commissionRule(ctx, args[1:]) // commission_rules.go
	case "standard-document":
		return e.standardDocument(ctx, args[1:]) // doctemplate.go
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	fmt.Fprintln(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// logger builds the one logger of the process.
func (e env) logger(cfg app.Config) zerolog.Logger {
	var w io.Writer = e.stderr
	if cfg.LogFormat == "console" {
		w = zerolog.ConsoleWriter{Out: e.stderr, TimeFormat: "15:04:05"}
	}
	return zerolog.New(w).Level(cfg.LogLevel).With().Timestamp().Logger()
}

func (e env) serve(ctx context.Context) error {
	cfg, err := app.LoadConfig(e.getenv)
	if err != nil {
		return err
	}
	log := e.logger(cfg)
	for _, w := range cfg.Warnings() {
		log.Warn().Msg(w)
	}
	return app.Serve(ctx, cfg, log)
}

func (e env) migrate(ctx context.Context) error {
	cfg, err := app.LoadConfig(e.getenv)
	if err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		return fmt.Errorf("DATABASE_URL is not set")
	}
	applied, err := migrateURL(ctx, cfg.DatabaseURL, cfg.AppDBPassword)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(e.stdout, "migrations: up to date")
	}
	for _, a := range applied {
		fmt.Fprintln(e.stdout, "applied", a)
	}
	return nil
}

// operatorService connects to DATABASE_URL (the owner) for operator commands.
func (e env) operatorService() (*operator.Service, func(), error) {
	u := e.getenv("DATABASE_URL")
	if u == "" {
		return nil, nil, fmt.Errorf("DATABASE_URL is not set (operator commands connect as the owner)")
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		return nil, nil, err
	}
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(db)))
	return operator.New(client), func() { _ = client.Close() }, nil
}

// print writes v as JSON with --json, else as the plain text text gives.
func (e env) print(asJSON bool, v any, text func(w io.Writer)) error {
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(e.stdout)
	return nil
}

// list splits a comma-separated flag value.
func list(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
