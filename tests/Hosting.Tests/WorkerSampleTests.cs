using System.Diagnostics;
using System.Reflection;

namespace XCall.Hosting.Tests;

/// <summary>The worker-service sample as two processes, each configured by nothing but its appsettings.json.</summary>
public sealed class WorkerSampleTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(60);

    [Fact]
    public void A_server_and_a_client_process_configured_only_by_appsettings_json_talk_and_stop_cleanly()
    {
        string sampleDll = Metadata("SampleDll");
        string sample = Metadata("SampleDirectory");
        string name = $"greeter-{Guid.NewGuid():N}";
        string serverDir = Directory.CreateTempSubdirectory("xcall-worker-server-").FullName;
        string clientDir = Directory.CreateTempSubdirectory("xcall-worker-client-").FullName;
        try
        {
            // The sample's own settings files, with a fresh shm name so parallel runs do not meet.
            File.WriteAllText(Path.Combine(serverDir, "appsettings.json"), File.ReadAllText(Path.Combine(sample, "appsettings.server.json")).Replace("shm://greeter", $"shm://{name}", StringComparison.Ordinal));
            File.WriteAllText(Path.Combine(clientDir, "appsettings.json"), File.ReadAllText(Path.Combine(sample, "appsettings.client.json")).Replace("shm://greeter", $"shm://{name}", StringComparison.Ordinal));

            using Process server = Start(sampleDll, serverDir);
            var serving = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var serverOutput = new System.Collections.Concurrent.ConcurrentQueue<string>();
            server.OutputDataReceived += (_, e) =>
            {
                if (e.Data is { } line)
                {
                    serverOutput.Enqueue(line);
                    if (line.Contains($"Serving at shm://{name}", StringComparison.Ordinal))
                    {
                        serving.TrySetResult();
                    }
                }
            };
            server.ErrorDataReceived += (_, e) => serverOutput.Enqueue(e.Data ?? "");
            server.BeginOutputReadLine();
            server.BeginErrorReadLine();
            try
            {
                Assert.True(serving.Task.Wait(s_wait), "the server did not serve:\n" + string.Join('\n', serverOutput));

                using Process client = Start(sampleDll, clientDir);
                Task<string> clientOutput = client.StandardOutput.ReadToEndAsync();
                Task<string> clientErrors = client.StandardError.ReadToEndAsync();
                Assert.True(client.WaitForExit(s_wait), "the client did not stop");
                Assert.True(client.ExitCode == 0, $"the client exited with {client.ExitCode}:\n{clientOutput.Result}{clientErrors.Result}");
                Assert.Contains("Hello, worker 0", clientOutput.Result, StringComparison.Ordinal);
                Assert.Contains("Hello, worker 2", clientOutput.Result, StringComparison.Ordinal);
                Assert.Contains($"Connected to IGreeter at shm://{name} over shm", clientOutput.Result, StringComparison.Ordinal);

                // SIGTERM, as a service manager stops it: the host shuts down, the server drains (no call in flight).
                using (Process kill = Process.Start("kill", ["-TERM", server.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]))
                {
                    kill.WaitForExit();
                }
                Assert.True(server.WaitForExit(s_wait), "the server did not stop on SIGTERM:\n" + string.Join('\n', serverOutput));
                server.WaitForExit(); // the output read to its end
                Assert.Equal(0, server.ExitCode);
                Assert.Contains(serverOutput, l => l.Contains("Drained: every call in flight answered", StringComparison.Ordinal));
            }
            finally
            {
                if (!server.HasExited)
                {
                    server.Kill();
                }
            }
        }
        finally
        {
            Directory.Delete(serverDir, recursive: true);
            Directory.Delete(clientDir, recursive: true);
        }
    }

    private static Process Start(string dll, string directory)
    {
        var info = new ProcessStartInfo("dotnet")
        {
            WorkingDirectory = directory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(dll);
        info.Environment["DOTNET_ENVIRONMENT"] = "Production";
        // One line per log entry, so the test can find them.
        info.Environment["Logging__Console__FormatterName"] = "simple";
        info.Environment["Logging__Console__FormatterOptions__SingleLine"] = "true";
        return Process.Start(info)!;
    }

    private static string Metadata(string key) => typeof(WorkerSampleTests).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == key).Value!;
}
