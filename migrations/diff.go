package migrations

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"

	"ariga.io/atlas/sql/migrate"
	atlas "ariga.io/atlas/sql/schema"
	"ariga.io/atlas/sql/sqltool"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"

	entmigrate "github.com/brokerdesk/brokerdesk/ent/migrate"
)

// HandWrittenPrefix names the constraints and indexes that hand-written migrations own (composite
// tenant keys and checks ent cannot model). The differ leaves them alone.
const HandWrittenPrefix = "tenant_"

// Diff writes the next migration file into dir: the difference between the ent schemas and the
// directory replayed into devDB, which must be an empty database. With check set it writes
// nothing and returns migrate.ErrNoPlan when there is no difference (the drift test).
func Diff(ctx context.Context, devDB *sql.DB, dir, name string, check bool) error {
	d, err := sqltool.NewGooseDir(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, migrate.HashFileName)); err == nil {
		if err := migrate.Validate(d); err != nil {
			return err // a file was edited or added without -hash
		}
	}
	return entmigrate.NewSchema(entsql.OpenDB(dialect.Postgres, devDB)).NamedDiff(ctx, name,
		schema.WithDir(d),
		schema.WithMigrationMode(schema.ModeReplay),
		schema.WithDialect(dialect.Postgres),
		schema.WithFormatter(sqltool.GooseFormatter),
		schema.WithDropColumn(true),
		schema.WithDropIndex(true),
		schema.WithDiffHook(keepHandWritten),
		schema.WithErrNoPlan(check),
	)
}

// Rehash rewrites atlas.sum after a hand-written file was added.
func Rehash(dir string) error {
	d, err := sqltool.NewGooseDir(dir)
	if err != nil {
		return err
	}
	sum, err := d.Checksum()
	if err != nil {
		return err
	}
	return migrate.WriteSumFile(d, sum)
}

// keepHandWritten drops the differ's proposals to remove objects named HandWrittenPrefix*.
func keepHandWritten(next schema.Differ) schema.Differ {
	return schema.DiffFunc(func(current, desired *atlas.Schema) ([]atlas.Change, error) {
		changes, err := next.Diff(current, desired)
		if err != nil {
			return nil, err
		}
		out := changes[:0]
		for _, c := range changes {
			if mt, ok := c.(*atlas.ModifyTable); ok {
				cur, _ := current.Table(mt.T.Name)
				kept := mt.Changes[:0]
				for _, tc := range mt.Changes {
					if !handWritten(tc) && !coveredByHandWritten(cur, tc) {
						kept = append(kept, tc)
					}
				}
				mt.Changes = kept
				if len(kept) == 0 {
					continue
				}
			}
			out = append(out, c)
		}
		return out, nil
	})
}

func handWritten(c atlas.Change) bool {
	switch c := c.(type) {
	case *atlas.DropForeignKey:
		return strings.HasPrefix(c.F.Symbol, HandWrittenPrefix)
	case *atlas.DropIndex:
		return strings.HasPrefix(c.I.Name, HandWrittenPrefix)
	case *atlas.DropCheck:
		return strings.HasPrefix(c.C.Name, HandWrittenPrefix)
	}
	return false
}

// coveredByHandWritten reports whether c adds an ent foreign key (an edge on an existing column,
// e.g. lead_attachments.lead_id) whose columns a hand-written composite key of the table
// already constrains to the same table: (company_id, lead_id) -> leads (company_id, id) is the
// stronger rule, so the edge adds no constraint of its own and the schema does not change.
func coveredByHandWritten(cur *atlas.Table, c atlas.Change) bool {
	add, ok := c.(*atlas.AddForeignKey)
	if !ok || cur == nil {
		return false
	}
	for _, fk := range cur.ForeignKeys {
		if !strings.HasPrefix(fk.Symbol, HandWrittenPrefix) || fk.RefTable == nil || add.F.RefTable == nil ||
			fk.RefTable.Name != add.F.RefTable.Name {
			continue
		}
		have := map[string]bool{}
		for _, col := range fk.Columns {
			have[col.Name] = true
		}
		all := true
		for _, col := range add.F.Columns {
			all = all && have[col.Name]
		}
		if all {
			return true
		}
	}
	return false
}
