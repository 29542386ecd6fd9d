using System.Diagnostics;
using XCall.Transport.Tcp.Tests.Support;

namespace XCall.Transport.Tcp.Tests;

/// <summary>
/// Two "machines": two network namespaces joined by a veth pair, addresses 10.203.x.1/30 and .2/30 inside
/// them only (the host's own network is never touched), the TestHost server in one and a TestHost client in
/// the other. Needs Linux, root and the <c>ip</c> tool (installed from Debian's packages when missing).
/// </summary>
public sealed class TwoHostTests(ITestOutputHelper output)
{
    [SkippableFact]
    public async Task Calls_cross_between_two_network_namespaces()
    {
        Skip.IfNot(OperatingSystem.IsLinux(), "needs Linux network namespaces");
        Skip.IfNot(IsRoot(), "needs root to create network namespaces");
        string suffix = Convert.ToHexString(BitConverter.GetBytes(Random.Shared.Next())).ToLowerInvariant()[..6];
        string nsA = $"xcall-a-{suffix}";
        string nsB = $"xcall-b-{suffix}";
        string vethA = $"xa{suffix}";
        string vethB = $"xb{suffix}";
        int subnet = Random.Shared.Next(0, 64) * 4; // 10.203.<x>.<subnet+1|+2>/30
        int third = Random.Shared.Next(0, 256);
        string serverIp = $"10.203.{third}.{subnet + 1}";
        string clientIp = $"10.203.{third}.{subnet + 2}";

        if (await EnsureIpToolAsync() is { } missing)
        {
            NotRun(missing);
        }
        try
        {
            if (await RunAsync("ip", $"netns add {nsA}") is { } refused)
            {
                NotRun($"cannot create a network namespace: {refused}");
            }
            await MustRunAsync("ip", $"netns add {nsB}");
            await MustRunAsync("ip", $"link add {vethA} netns {nsA} type veth peer name {vethB} netns {nsB}");
            await MustRunAsync("ip", $"-n {nsA} addr add {serverIp}/30 dev {vethA}");
            await MustRunAsync("ip", $"-n {nsB} addr add {clientIp}/30 dev {vethB}");
            foreach ((string ns, string dev) in new[] { (nsA, vethA), (nsB, vethB), (nsA, "lo"), (nsB, "lo") })
            {
                await MustRunAsync("ip", $"-n {ns} link set {dev} up");
            }

            using TestHostProcess server = TestHostProcess.Start($"server {serverIp} 0", netns: nsA);
            int port = await server.WaitForReadyAsync();
            using TestHostProcess client = TestHostProcess.Start($"client {serverIp} {port} 100 3000", netns: nsB);
            string ok = await client.WaitForLineAsync("OK ");

            Assert.Equal($"OK 100 tcp://{serverIp}:{port}", ok);
            Assert.Equal(0, await client.WaitForExitAsync());
            await server.WaitForLineAsync("ACCEPTED");
            output.WriteLine($"{nsB} ({clientIp}) -> {nsA} ({serverIp}:{port}): {ok}");
        }
        finally
        {
            // Deleting a namespace deletes its end of the veth pair, and with it the other end.
            await RunAsync("ip", $"netns del {nsA}");
            await RunAsync("ip", $"netns del {nsB}");
        }
    }

    /// <summary>Reports the test as skipped, with the reason, in the runner's results.</summary>
    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private void NotRun(string why)
    {
        string message = $"two-host test needs network namespaces: {why}";
        output.WriteLine(message);
        throw new SkipException(message);
    }

    /// <summary>Null when <c>ip</c> is there (installing iproute2 first if root and missing), else why not.</summary>
    private async Task<string?> EnsureIpToolAsync()
    {
        if (await RunAsync("ip", "-V") is null)
        {
            return null;
        }
        output.WriteLine("'ip' is missing: installing iproute2");
        if (await RunAsync("apt-get", "install -y -q iproute2", TimeSpan.FromMinutes(3)) is { } failed
            && await RunAsync("sh", "-c \"apt-get update -q && apt-get install -y -q iproute2\"", TimeSpan.FromMinutes(5)) is { } failedAgain)
        {
            return $"'ip' is missing and iproute2 could not be installed: {failed} / {failedAgain}";
        }
        return await RunAsync("ip", "-V") is { } stillMissing ? $"'ip' still missing: {stillMissing}" : null;
    }

    private async Task MustRunAsync(string file, string args)
    {
        if (await RunAsync(file, args) is { } error)
        {
            Assert.Fail($"{file} {args}: {error}");
        }
    }

    /// <summary>Runs a command; null on success, else what went wrong.</summary>
    private async Task<string?> RunAsync(string file, string args, TimeSpan? timeout = null)
    {
        var info = new ProcessStartInfo(file, args) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        info.Environment["DEBIAN_FRONTEND"] = "noninteractive";
        Process process;
        try
        {
            process = Process.Start(info)!;
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            return $"cannot run {file}: {ex.Message}";
        }
        using (process)
        {
            Task<string> stdout = process.StandardOutput.ReadToEndAsync();
            Task<string> stderr = process.StandardError.ReadToEndAsync();
            try
            {
                await process.WaitForExitAsync().WaitAsync(timeout ?? Timeouts.Long);
            }
            catch (TimeoutException)
            {
                process.Kill(entireProcessTree: true);
                return $"{file} {args} did not finish";
            }
            string err = (await stderr).Trim();
            await stdout;
            if (process.ExitCode != 0)
            {
                return $"exit {process.ExitCode}: {err}";
            }
            return null;
        }
    }

    private static bool IsRoot() => File.Exists("/proc/self/status")
        && File.ReadLines("/proc/self/status").FirstOrDefault(l => l.StartsWith("Uid:", StringComparison.Ordinal)) is { } uid
        && uid.Split((char[])['\t', ' '], StringSplitOptions.RemoveEmptyEntries).Skip(1).FirstOrDefault() == "0";
}
