// Package imports tests /imports end to end: uploads in every encoding, delimiter and as
// xlsx, the suggested and the given mapping, every error case, invalid and ragged rows,
// duplicates and the three commit policies, the resumable commit (a run stopped after a batch
// and run again), and duplicate detection pinned as the import's creator.
package imports

import (
	"os"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// setup returns the package's server, working jobs like a serve process (analysis and commit
// run on the queue).
func setup(t testing.TB) *apitest.Env { return apitest.Working(t) }
