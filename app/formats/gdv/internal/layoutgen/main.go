// Command layoutgen writes the GDV record layout tables of package gdv from the GDV's
// machine-readable description of the VU-Vermittler data set (see ../../spec/README.md).
//
//	go run ./internal/layoutgen -o layouts_gen.go spec/VUVM2023.xml spec/VUVM2009.xml
//
// The first file is the release the tables are built from. Every further file is an older
// release that is only checked: each of its fields must sit at the same position, with the
// same length, in the same record type and Teildatensatz of the first file (blank filler
// excepted). That check is what lets the reader use one table for files of every release.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv/internal/layoutxml"
)

func main() {
	out := flag.String("o", "layouts_gen.go", "output file")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "layoutgen: usage: layoutgen -o FILE NEWEST.xml [OLDER.xml ...]")
		os.Exit(2)
	}
	src, err := layoutxml.Generate(flag.Args())
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "layoutgen:", err)
		os.Exit(1)
	}
}
