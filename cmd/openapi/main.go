// Command openapi writes the OpenAPI document exactly as the server serves it at
// GET /api/public/v1/openapi.json (openapi.yaml with every area file merged), for the linters of
// `go tool task lint` and for client generators.
//
//	go run ./cmd/openapi -o tmp/openapi.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/brokerdesk/brokerdesk/app/openapi"
)

func main() {
	out := flag.String("o", "", "write to this file instead of standard output")
	flag.Parse()
	doc, err := openapi.JSON()
	if err == nil {
		if *out == "" {
			_, err = os.Stdout.Write(doc)
		} else {
			err = os.WriteFile(*out, doc, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi:", err)
		os.Exit(1)
	}
}
