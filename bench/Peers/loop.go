// The 3-process loop of CSP.NET's Table 1, for bench --suite channels: A sends an int to B, B to C
// and C back to A over unbuffered channels; A sends the next int once the last has come round.
// Usage: loop <ints> <runs>. One warm-up run of ints/10, then <runs> timed runs.
// Prints: RESULT <median ms of the timed runs>.
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"
)

func forward(in <-chan int, out chan<- int, count int) {
	for i := 0; i < count; i++ {
		out <- <-in
	}
}

func run(ints int) float64 {
	ab, bc, ca := make(chan int), make(chan int), make(chan int)
	go forward(ab, bc, ints)
	go forward(bc, ca, ints)
	start := time.Now()
	for i := 0; i < ints; i++ {
		ab <- i
		<-ca
	}
	return float64(time.Since(start).Nanoseconds()) / 1e6
}

func main() {
	ints, _ := strconv.Atoi(os.Args[1])
	runs, _ := strconv.Atoi(os.Args[2])
	run(ints / 10)
	times := make([]float64, runs)
	for r := range times {
		times[r] = run(ints)
	}
	sort.Float64s(times)
	fmt.Printf("RESULT %.3f\n", times[len(times)/2])
}
