// Command iavl times the Cosmos SDK's own state tree (IAVL v1.2.6 on goleveldb through cosmos-db) on
// bench/bench_store.py's workload, so that the Python store's commit cost can be set beside the tree the SDK
// commits with: a state of -state random 32-byte keys and values, then, for each size in -sizes, -repeats
// blocks changing that many keys (half updates of existing keys, half inserts, 32-byte values), each block's
// Set calls and SaveVersion timed. One JSON line per size on stdout (medians, ms); progress on stderr.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	dbm "github.com/cosmos/cosmos-db"
	"github.com/cosmos/iavl"
	idb "github.com/cosmos/iavl/db"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// row is one size's result: medians over the repeats of the Set calls, SaveVersion and both.
type row struct {
	Tree    string  `json:"tree"`
	Batch   int     `json:"batch"`
	State   int     `json:"state"`
	Repeats int     `json:"repeats"`
	SetMs   float64 `json:"set_ms"`
	SaveMs  float64 `json:"save_ms"`
	TotalMs float64 `json:"total_ms"`
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "iavl bench:", err)
		os.Exit(1)
	}
}

func main() {
	state := flag.Int("state", 1_000_000, "initial number of keys")
	sizesArg := flag.String("sizes", "1000,10000,100000", "comma-separated block sizes (keys changed)")
	repeats := flag.Int("repeats", 5, "timed blocks per size")
	step := flag.Int("build-step", 100_000, "keys per version while building")
	cacheSize := flag.Int("cache-size", 781_250, "IAVL node cache (the SDK's default iavl-cache-size)")
	dir := flag.String("dir", "", "where to put the DB (default: a temp dir, removed at exit)")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()

	base, err := os.MkdirTemp(*dir, "iavl-bench-")
	must(err)
	defer os.RemoveAll(base)
	// The same LevelDB settings as the Python store's DB_OPTIONS (sdk/store/commitstore.py).
	ldb, err := dbm.NewGoLevelDBWithOpts("iavl", base, &opt.Options{
		Filter:             filter.NewBloomFilter(10),
		WriteBuffer:        64 << 20,
		BlockCacheCapacity: 64 << 20,
	})
	must(err)
	defer ldb.Close()
	// As the SDK opens a store's tree: fast nodes on (iavl-disable-fastnode = false).
	tree := iavl.NewMutableTree(idb.NewWrapper(ldb), *cacheSize, false, iavl.NewNopLogger())
	rnd := rand.New(rand.NewSource(*seed))

	keys := make([][]byte, 0, *state)
	t0 := time.Now()
	for len(keys) < *state {
		n := min(*step, *state-len(keys))
		for i := 0; i < n; i++ {
			k := randBytes(rnd, 32)
			_, err := tree.Set(k, randBytes(rnd, 32))
			must(err)
			keys = append(keys, k)
		}
		_, v, err := tree.SaveVersion()
		must(err)
		fmt.Fprintf(os.Stderr, "  iavl state %9d keys  v%d  %7.1fs\n", len(keys), v, time.Since(t0).Seconds())
	}
	buildS := time.Since(t0).Seconds()
	fmt.Fprintln(os.Stderr, "  iavl: compacting the DB")
	must(ldb.DB().CompactRange(util.Range{}))

	for _, s := range strings.Split(*sizesArg, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(s))
		must(err)
		var sets, saves, totals []float64
		for r := 0; r < *repeats; r++ {
			updates := make([][]byte, size/2)
			for i := range updates {
				updates[i] = keys[rnd.Intn(len(keys))]
			}
			inserts := make([][]byte, size-size/2)
			for i := range inserts {
				inserts[i] = randBytes(rnd, 32)
			}
			values := make([][]byte, size)
			for i := range values {
				values[i] = randBytes(rnd, 32)
			}
			t := time.Now()
			for i, k := range updates {
				_, err := tree.Set(k, values[i])
				must(err)
			}
			for i, k := range inserts {
				_, err := tree.Set(k, values[len(updates)+i])
				must(err)
			}
			tSet := time.Now()
			_, _, err := tree.SaveVersion()
			must(err)
			tEnd := time.Now()
			keys = append(keys, inserts...)
			sets = append(sets, ms(tSet.Sub(t)))
			saves = append(saves, ms(tEnd.Sub(tSet)))
			totals = append(totals, ms(tEnd.Sub(t)))
			fmt.Fprintf(os.Stderr, "  iavl %7d keys  run %d: set %8.1f ms  save %8.1f ms\n", size, r+1, sets[r], saves[r])
		}
		out, err := json.Marshal(row{"iavl", size, *state, *repeats, median(sets), median(saves), median(totals)})
		must(err)
		fmt.Println(string(out))
	}
	fmt.Fprintf(os.Stderr, "  iavl: state built in %.1fs\n", buildS)
}
