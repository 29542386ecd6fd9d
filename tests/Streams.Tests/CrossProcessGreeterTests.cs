using System.Diagnostics;
using System.Reflection;

namespace XCall.Streams.Tests;

/// <summary>The grpc-dotnet greeter over shm:// between two processes: Kestrel on XCall's transport, and a client.</summary>
public sealed class CrossProcessGreeterTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(60);

    [Fact]
    public void A_grpc_client_process_calls_a_Kestrel_server_process_over_shm()
    {
        string address = $"shm://greeter-{Guid.NewGuid():N}";
        using Process server = Start("serve", address);
        try
        {
            string? ready = server.StandardOutput.ReadLine();
            Assert.Equal($"serving {address} in process {server.Id}", ready);

            using Process client = Start("call", address, "process");
            Task<string> output = client.StandardOutput.ReadToEndAsync();
            Task<string> errors = client.StandardError.ReadToEndAsync();
            Assert.True(client.WaitForExit(s_wait), "the gRPC client process did not finish");
            Assert.True(client.ExitCode == 0, $"the gRPC client exited with {client.ExitCode}:\n{output.Result}{errors.Result}");
            Assert.Equal(
                ["Hello process", "Hello process #0", "Hello process #1", "Hello process #2"],
                output.Result.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));

            server.StandardInput.WriteLine();
            Assert.True(server.WaitForExit(s_wait), "the gRPC server process did not stop");
            Assert.Equal(0, server.ExitCode);
        }
        finally
        {
            if (!server.HasExited)
            {
                server.Kill();
            }
        }
    }

    private static Process Start(params string[] args)
    {
        var info = new ProcessStartInfo("dotnet")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(typeof(CrossProcessGreeterTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "TestAppPath").Value!);
        foreach (string arg in args)
        {
            info.ArgumentList.Add(arg);
        }
        return Process.Start(info)!;
    }
}
