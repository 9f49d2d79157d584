package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/brokerdesk/brokerdesk/app/operator"
)

// multi is a repeatable string flag (--redirect-uri a --redirect-uri b).
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func (e env) oauthClient(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("oauth-client: want create, list, rotate-secret, disable or delete")
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	fs := e.flags("oauth-client " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	name := fs.String("name", "", "the app's name, shown on the consent screen")
	var redirects multi
	fs.Var(&redirects, "redirect-uri", "a redirect URI, matched exactly (repeat for more)")
	scopes := fs.String("scopes", "", "comma-separated scopes the client may ask for")
	public := fs.Bool("public", false, "a public client (no secret, PKCE only)")
	companyID := fs.String("company", "", "bind to one company (client credentials allowed)")
	envName := fs.String("env", "live", "live or test (tokens act on the sandbox twin)")
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	show := func(c operator.OAuthClient) func(io.Writer) {
		return func(w io.Writer) {
			co := "-"
			if c.CompanyID != nil {
				co = c.CompanyID.String()
			}
			fmt.Fprintf(w, "%s  %q  %-4s %-8s public=%v company %s  scopes %s  redirects %s\n", c.ID, c.Name, c.Env, c.Status,
				c.Public, co, strings.Join(c.Scopes, ","), strings.Join(c.RedirectURIs, " "))
			if c.Secret != "" {
				fmt.Fprintf(w, "client_secret: %s\n(shown once: only its hash is stored)\n", c.Secret)
			}
		}
	}
	one := func() (string, error) {
		if len(pos) != 1 {
			return "", fmt.Errorf("oauth-client %s: name one client by id", args[0])
		}
		return pos[0], nil
	}
	switch args[0] {
	case "create":
		in := operator.NewOAuthClientInput{Name: *name, RedirectURIs: redirects, Scopes: list(*scopes), Public: *public, Env: *envName}
		if *companyID != "" {
			id, err := parseID("company", *companyID)
			if err != nil {
				return err
			}
			in.CompanyID = &id
		}
		c, err := svc.CreateOAuthClient(ctx, in)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, c, show(c))
	case "list":
		cs, err := svc.ListOAuthClients(ctx)
		if err != nil {
			return err
		}
		return e.print(*asJSON, cs, func(w io.Writer) {
			for _, c := range cs {
				show(c)(w)
			}
		})
	case "rotate-secret", "disable":
		ref, err := one()
		if err != nil {
			return err
		}
		f := svc.RotateOAuthClientSecret
		if args[0] == "disable" {
			f = svc.DisableOAuthClient
		}
		c, err := f(ctx, ref)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, c, show(c))
	case "delete":
		ref, err := one()
		if err != nil {
			return err
		}
		if err := svc.DeleteOAuthClient(ctx, ref); err != nil {
			return explain(err)
		}
		return e.print(*asJSON, map[string]string{"deleted": ref}, func(w io.Writer) { fmt.Fprintf(w, "deleted %s\n", ref) })
	}
	return fmt.Errorf("oauth-client: unknown subcommand %q", args[0])
}

// setPassword reads the password from stdin (first line), never from a flag: flags show in
// the process list and the shell history.
func (e env) setPassword(ctx context.Context, args []string) error {
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	fs := e.flags("user set-password")
	companyID := fs.String("company", "", "company id")
	userRef := fs.String("user", "", "user id or e-mail")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	id, err := parseID("company", *companyID)
	if err != nil {
		return err
	}
	if *userRef == "" {
		return fmt.Errorf("--user is required")
	}
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return err
	}
	if err := svc.SetPassword(ctx, id, *userRef, strings.TrimRight(line, "\r\n")); err != nil {
		return explain(err)
	}
	fmt.Fprintln(e.stdout, "password set")
	return nil
}
