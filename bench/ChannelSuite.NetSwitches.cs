using System.Globalization;

namespace XCall.Bench;

/// <summary>
/// Where a named-channel operation's wake-ups go (Linux): the context switches of each thread of the two processes
/// over one burst, per operation, read from /proc/PID/task/TID/status. A thread that sleeps and is woken once per
/// operation shows one voluntary switch per operation; a spinning thread shows none.
/// </summary>
internal static partial class ChannelSuite
{
    private readonly record struct ThreadSwitches(string Name, long Voluntary, long Involuntary, long CpuNs);

    /// <summary>Each thread's switches so far, by thread id; empty where /proc is not there.</summary>
    private static Dictionary<int, ThreadSwitches> Switches(int pid)
    {
        var switches = new Dictionary<int, ThreadSwitches>();
        string tasks = $"/proc/{pid}/task";
        if (!Directory.Exists(tasks))
        {
            return switches;
        }
        foreach (string task in Directory.EnumerateDirectories(tasks))
        {
            try
            {
                string name = File.ReadAllText(Path.Combine(task, "comm")).Trim();
                long voluntary = 0, involuntary = 0;
                foreach (string line in File.ReadLines(Path.Combine(task, "status")))
                {
                    if (line.StartsWith("voluntary_ctxt_switches:", StringComparison.Ordinal))
                    {
                        voluntary = long.Parse(line.AsSpan(24).Trim(), CultureInfo.InvariantCulture);
                    }
                    else if (line.StartsWith("nonvoluntary_ctxt_switches:", StringComparison.Ordinal))
                    {
                        involuntary = long.Parse(line.AsSpan(27).Trim(), CultureInfo.InvariantCulture);
                    }
                }
                // schedstat: time on a CPU (ns), time waiting for one, time slices.
                long cpu = long.Parse(File.ReadAllText(Path.Combine(task, "schedstat")).Split(' ')[0], CultureInfo.InvariantCulture);
                switches[int.Parse(Path.GetFileName(task), CultureInfo.InvariantCulture)] = new ThreadSwitches(name, voluntary, involuntary, cpu);
            }
            catch (IOException)
            {
                // The thread ended while it was read.
            }
        }
        return switches;
    }

    /// <summary>
    /// Runs <paramref name="burst"/> and describes the switches and CPU time per <paramref name="per"/> operations of each
    /// thread that switched at least once per 20 such units or ran 20 ns per operation.
    /// </summary>
    private static string SwitchesPerOp(int[] pids, int ops, Action burst, int per = 1)
    {
        Dictionary<int, ThreadSwitches>[] before = pids.Select(Switches).ToArray();
        burst();
        var parts = new List<string>();
        for (int p = 0; p < pids.Length; p++)
        {
            foreach ((int tid, ThreadSwitches after) in Switches(pids[p]))
            {
                ThreadSwitches was = before[p].GetValueOrDefault(tid, new ThreadSwitches(after.Name, 0, 0, 0));
                double voluntary = (after.Voluntary - was.Voluntary) * per / (double)ops;
                double involuntary = (after.Involuntary - was.Involuntary) * per / (double)ops;
                double cpu = (after.CpuNs - was.CpuNs) / (double)ops;
                if (voluntary + involuntary >= 0.05 || cpu >= 20)
                {
                    parts.Add($"{(p == 0 ? "writer" : "peer")}:{after.Name}#{tid % 1000} {voluntary:0.00}+{involuntary:0.00} {cpu:0}ns");
                }
            }
        }
        return parts.Count == 0 ? "none" : string.Join(", ", parts);
    }
}
