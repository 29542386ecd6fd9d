// The Erlang ring in Go, for bench --suite channels: N goroutines joined by unbuffered channels,
// M laps of one token. Prints: RESULT <ns per hop> <peak RSS bytes> <bytes per process>.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func forward(in <-chan int, out chan<- int) {
	for v := range in {
		out <- v
	}
}

func peakRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	m, _ := strconv.Atoi(os.Args[2])
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	first := make(chan int)
	in := first
	for i := 1; i < n; i++ {
		out := make(chan int)
		go forward(in, out)
		in = out
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	start := time.Now()
	for lap := 0; lap < m; lap++ {
		first <- lap
		<-in
	}
	elapsed := time.Since(start)
	perProcess := float64(after.Sys-before.Sys) / float64(n-1)
	fmt.Printf("RESULT %.1f %d %.0f\n", float64(elapsed.Nanoseconds())/(float64(n)*float64(m)), peakRSS(), perProcess)
}
