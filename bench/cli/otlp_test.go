package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/composetest"
)

// otlpReceiver is an OTLP/HTTP metrics endpoint as a collector serves it:
// POST /v1/metrics with a protobuf ExportMetricsServiceRequest, answered
// with an ExportMetricsServiceResponse. It keeps every request.
type otlpReceiver struct {
	url  string
	mu   sync.Mutex
	reqs []*colmetrics.ExportMetricsServiceRequest
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rcv := &otlpReceiver{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := &colmetrics.ExportMetricsServiceRequest{}
		if err == nil {
			err = proto.Unmarshal(body, req)
		}
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, fmt.Sprintf("bad request: %v (%s)", err, r.Header.Get("Content-Type")), http.StatusBadRequest)
			return
		}
		rcv.mu.Lock()
		rcv.reqs = append(rcv.reqs, req)
		rcv.mu.Unlock()
		out, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rcv
}

// lastSum is the last pushed value of a monotonic sum's data point whose
// attribute key has value, and how many requests there were.
func (o *otlpReceiver) lastSum(metric, key, value string) (v int64, found bool, pushes int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, req := range o.reqs {
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					if m.GetName() != metric {
						continue
					}
					for _, dp := range m.GetSum().GetDataPoints() {
						for _, a := range dp.GetAttributes() {
							if a.GetKey() == key && a.GetValue().GetStringValue() == value {
								v, found = dp.GetAsInt(), true
							}
						}
					}
				}
			}
		}
	}
	return v, found, len(o.reqs)
}

// histogramCount is the last pushed count of op's latency histogram.
func (o *otlpReceiver) histogramCount(op string) (count uint64, scale int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, req := range o.reqs {
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					for _, dp := range m.GetExponentialHistogram().GetDataPoints() {
						for _, a := range dp.GetAttributes() {
							if m.GetName() == "lockbench.latency" && a.GetKey() == "op" && a.GetValue().GetStringValue() == op {
								var n uint64
								for _, c := range dp.GetPositive().GetBucketCounts() {
									n += c
								}
								count, scale = n+dp.GetZeroCount(), dp.GetScale()
							}
						}
					}
				}
			}
		}
	}
	return count, scale
}

// TestOTLPPushesTheStoredCounts runs lockbench against a real redis-server
// with --otlp pointed at a receiver started here: the last push holds the
// stored result's acquisitions and time-to-acquire count. A receiver that
// refuses (a closed port) leaves the run's exit code 0 and is reported once.
func TestOTLPPushesTheStoredCounts(t *testing.T) {
	data := composetest.Server(t, compose.ServerOptions{})
	rcv := startOTLPReceiver(t)
	code, stdout, errOut := lockbench(t, "run", "--redis", "redis://"+data.Addr(), "-d", "2s", "--warmup", "0", "-c", "4", "--keys", "4",
		"-q", "--format", "json", "--out", t.TempDir(), "--otlp", rcv.url)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	acquired, _ := field(t, doc, "contention.acquired").(float64)
	pushed, found, pushes := rcv.lastSum("lockbench.events", "figure", "contention.acquired")
	t.Logf("%d pushes; last acquired %d, stored %v", pushes, pushed, acquired)
	if !found || acquired == 0 || pushed != int64(acquired) {
		t.Errorf("pushed acquisitions %d (found %v, %d pushes), stored %v", pushed, found, pushes, acquired)
	}
	tta, _ := field(t, doc, "ops.time_to_acquire.count").(float64)
	if n, scale := rcv.histogramCount("time_to_acquire"); n != uint64(tta) || scale != 3 {
		t.Errorf("pushed time_to_acquire histogram holds %d (scale %d), stored count %v", n, scale, tta)
	}
	if strings.Contains(errOut, "otlp") {
		t.Errorf("a receiving endpoint, yet: %s", errOut)
	}

	// Refused: a port nothing listens on.
	closed := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	code, _, errOut = lockbench(t, "run", "--redis", "redis://"+data.Addr(), "-d", "1s", "--warmup", "0", "-q", "--format", "json",
		"--out", t.TempDir(), "--otlp", closed)
	m := regexp.MustCompile(`(?m)^otlp: (\d+) of (\d+) pushes to ` + regexp.QuoteMeta(closed) + `/v1/metrics failed \(last: .*\)$`).FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("refusing endpoint: exit %d (want 0), stderr %q", code, errOut)
	}
	if failed, _ := strconv.Atoi(m[1]); failed < 1 || m[1] != m[2] {
		t.Errorf("refusing endpoint: %s of %s pushes failed, want all and at least one", m[1], m[2])
	}
	if strings.Count(errOut, "otlp") != 1 {
		t.Errorf("the failed pushes are said more than once: %q", errOut)
	}
}
