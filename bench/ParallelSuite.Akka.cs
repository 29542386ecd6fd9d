using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using System.Text.RegularExpressions;

namespace XCall.Bench;

/// <summary>
/// The parallel suite's peer: one-way messages from one thread between two processes through Akka.NET remoting
/// (bench/AkkaPeer, Akka's defaults, loopback tcp), each burst ended by an ask that sees every message of it.
/// </summary>
internal static partial class ParallelSuite
{
    private static readonly TimeSpan s_peerLimit = TimeSpan.FromMinutes(5);

    /// <summary>The messages per second of each burst, or null with the reason the peer could not run.</summary>
    private static (List<double>? Rates, string? Skipped) RunAkkaPeer(int messages, int rounds)
    {
        string? path = typeof(ParallelSuite).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .FirstOrDefault(a => a.Key == "AkkaPeerPath")?.Value;
        if (path is null || !File.Exists(path))
        {
            return (null, $"the Akka.NET peer is not built ({path ?? "no path"}): build bench/AkkaPeer");
        }
        using Process receiver = StartPeer(path, "receive");
        try
        {
            string? first = receiver.StandardOutput.ReadLineAsync().WaitAsync(s_peerLimit).GetAwaiter().GetResult();
            Match port = first is null ? Match.Empty : PortLine().Match(first);
            if (!port.Success)
            {
                return (null, $"the Akka.NET receiver did not listen: {first}{receiver.StandardError.ReadToEnd()}");
            }
            using Process sender = StartPeer(path, "send", port.Groups[1].Value, messages.ToString(CultureInfo.InvariantCulture),
                rounds.ToString(CultureInfo.InvariantCulture));
            Task<string> output = sender.StandardOutput.ReadToEndAsync();
            Task<string> errors = sender.StandardError.ReadToEndAsync();
            if (!sender.WaitForExit(s_peerLimit))
            {
                sender.Kill(entireProcessTree: true);
                return (null, $"the Akka.NET sender did not end within {s_peerLimit}");
            }
            var rates = BurstLine().Matches(output.Result).Select(m => double.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture)).ToList();
            return sender.ExitCode == 0 && rates.Count == rounds
                ? (rates, null)
                : (null, $"the Akka.NET sender failed (exit {sender.ExitCode}): {output.Result}{errors.Result}");
        }
        finally
        {
            receiver.StandardInput.Close(); // the receiver's signal to leave
            if (!receiver.WaitForExit(TimeSpan.FromSeconds(30)))
            {
                receiver.Kill(entireProcessTree: true);
            }
        }
    }

    private static Process StartPeer(string path, params string[] arguments)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            UseShellExecute = false, RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true,
        };
        start.ArgumentList.Add(path);
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        return Process.Start(start)!;
    }

    [GeneratedRegex(@"^port (\d+)")]
    private static partial Regex PortLine();

    [GeneratedRegex(@"burst \d+: (\d+) messages/s")]
    private static partial Regex BurstLine();
}
