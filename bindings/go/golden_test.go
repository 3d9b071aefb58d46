package temporalfilters

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The golden blobs of tests/data are written by the C library
// (tests/make_golden.c) from the operations of tests/util/golden.h. Every binding
// reads them and gets the answers listed in the .expected files, and
// rebuilds them through its own layer byte for byte: since every language
// writes exactly these bytes and reads them, a blob written by one language
// is read by all the others.

type goldenCase struct {
	name  string // file name without extension
	width uint64
	flags RecencySketchFlags
}

var goldenCases = []goldenCase{
	{"recency_sketch_v1", 256, 0},
	{"recency_sketch_blocked_v1", 96, RecencySketchBlocked | RecencySketchConcurrent},
}

// goldenBinaryKey is the key with NUL bytes of tests/util/golden.h.
var goldenBinaryKey = []byte{0x00, 'b', 'i', 'n', 0x00, 0xff, 0x7f}

func goldenDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TF_GOLDEN_DIR")
	if dir == "" {
		t.Fatal("TF_GOLDEN_DIR is not set (meson test sets it to tests/data)")
	}
	return dir
}

func readGoldenBlob(t *testing.T, name string) []byte {
	t.Helper()
	blob, err := os.ReadFile(filepath.Join(goldenDir(t), name+".tfb"))
	if err != nil {
		t.Fatal(err)
	}
	return blob
}

// expectedLine is one answer line of a .expected file: the file, the line
// number and the fields, for the messages.
type expectedLine struct {
	t      *testing.T
	where  string // "<name>.expected:<line>"
	fields []string
}

// readExpectedLines reads the answers of <name>.expected, every line but the
// empty ones and the comments (#), each with the fields that form names, one
// per "<...>"
// (e.g. "<hex key> <time>").
func readExpectedLines(t *testing.T, name, form string) []expectedLine {
	t.Helper()
	f, err := os.Open(filepath.Join(goldenDir(t), name+".expected"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []expectedLine
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l := expectedLine{t, fmt.Sprintf("%s.expected:%d", name, line), strings.Fields(text)}
		if len(l.fields) != strings.Count(form, "<") {
			t.Fatalf("%s: want %q, got %q", l.where, form, text)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// key is the line's key, its first field in hex.
func (l expectedLine) key() []byte {
	l.t.Helper()
	key, err := hex.DecodeString(l.fields[0])
	if err != nil {
		l.t.Fatalf("%s: %v", l.where, err)
	}
	return key
}

// uint is field i, a decimal number.
func (l expectedLine) uint(i int) uint64 {
	l.t.Helper()
	v, err := strconv.ParseUint(l.fields[i], 10, 64)
	if err != nil {
		l.t.Fatalf("%s: %v", l.where, err)
	}
	return v
}

// bit is field i, 0 or 1.
func (l expectedLine) bit(i int) bool {
	l.t.Helper()
	switch l.fields[i] {
	case "0":
		return false
	case "1":
		return true
	}
	l.t.Fatalf("%s: field %d must be 0 or 1, got %q", l.where, i+1, l.fields[i])
	return false
}

// goldenAnswer is a key of a .expected file and the answer A listed for it.
type goldenAnswer[A any] struct {
	key  []byte
	want A
}

// readAnswers reads the answers of <name>.expected (readExpectedLines),
// each line's answer taken by answer.
func readAnswers[A any](t *testing.T, name, form string, answer func(l expectedLine) A) []goldenAnswer[A] {
	t.Helper()
	var out []goldenAnswer[A]
	for _, l := range readExpectedLines(t, name, form) {
		out = append(out, goldenAnswer[A]{l.key(), answer(l)})
	}
	return out
}

// readExpected reads a recency sketch's answers: "<hex key> <time>".
func readExpected(t *testing.T, name string) []goldenAnswer[uint64] {
	t.Helper()
	out := readAnswers(t, name, "<hex key> <time>", func(l expectedLine) uint64 { return l.uint(1) })
	// GOLDEN_RS_KEYS string keys plus the binary key.
	if len(out) != 251 {
		t.Fatalf("%s.expected: %d answers, want 251", name, len(out))
	}
	return out
}

// checkGoldenBytes wants s to serialize (MarshalBinary) to the golden blob
// name, byte for byte.
func checkGoldenBytes(t *testing.T, s structure, name string) {
	t.Helper()
	got, err := s.MarshalBinary()
	must(t, err)
	want := readGoldenBlob(t, name)
	if !bytes.Equal(got, want) {
		t.Fatalf("rebuilt %v: %d bytes, differs from the golden blob %s (%d bytes) at byte %d",
			s, len(got), name, len(want), firstDiff(got, want))
	}
}

// buildGolden replays tests/util/golden.h through this binding, one call per
// operation (batch: through UpdateBatch, in the same order).
func buildGolden(t *testing.T, c goldenCase, batch bool) *RecencySketch {
	t.Helper()
	s := mustNew(t, c.width, 3, 42, c.flags)
	var keys [][]byte
	var times []uint64
	op := func(key []byte, now uint64) {
		if batch {
			keys = append(keys, key)
			times = append(times, now)
		} else if err := s.Update(key, now); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 200; i++ {
		op([]byte(fmt.Sprintf("key-%d", i)), 1000+7*uint64(i))
	}
	for i := 0; i < 200; i += 3 {
		now := uint64(500 + i)
		if i%2 == 1 {
			now = uint64(5000 + i)
		}
		op([]byte(fmt.Sprintf("key-%d", i)), now)
	}
	op(goldenBinaryKey, 123456789)
	if batch {
		if err := s.UpdateBatch(keys, times); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestGoldenRead(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			blob := readGoldenBlob(t, c.name)
			s := keep(t, res(DeserializeRecencySketch(blob)))
			info, err := s.Info()
			if err != nil {
				t.Fatal(err)
			}
			if info.Width != c.width || info.Depth != 3 || info.Seed != 42 || info.Flags != c.flags {
				t.Fatalf("info = %+v, want width %d depth 3 seed 42 flags %d", info, c.width, c.flags)
			}
			answers := readExpected(t, c.name)
			keys := make([][]byte, len(answers))
			sawBinary, sawNever := false, false
			for i, a := range answers {
				keys[i] = a.key
				got, err := s.Query(a.key)
				if err != nil {
					t.Fatal(err)
				}
				if got != a.want {
					t.Errorf("Query(%q) = %d, want %d", a.key, got, a.want)
				}
				sawBinary = sawBinary || bytes.Equal(a.key, goldenBinaryKey)
				sawNever = sawNever || a.want == Never
			}
			if !sawBinary || !sawNever {
				t.Errorf("expected answers lack the binary key (%v) or a never-seen key (%v)", sawBinary, sawNever)
			}
			got, err := s.QueryBatch(keys)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range answers {
				if got[i] != a.want {
					t.Errorf("QueryBatch[%d] (%q) = %d, want %d", i, a.key, got[i], a.want)
				}
			}
			again, err := s.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, blob) {
				t.Error("the deserialized golden sketch serializes to other bytes")
			}
		})
	}
}

func TestGoldenWrite(t *testing.T) {
	for _, c := range goldenCases {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batch=%v", c.name, batch), func(t *testing.T) {
				checkGoldenBytes(t, buildGolden(t, c, batch), c.name)
			})
		}
	}
}

// TestGoldenChecksum pins the test's own MurmurHash3 (used to craft blobs)
// against the checksums the C library wrote.
func TestGoldenChecksum(t *testing.T) {
	for _, c := range goldenCases {
		blob := readGoldenBlob(t, c.name)
		n := len(blob) - 8
		if got, want := murmur3x64Low(blob[:n], 0), binary.LittleEndian.Uint64(blob[n:]); got != want {
			t.Errorf("%s: checksum %#x, the blob says %#x", c.name, got, want)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
