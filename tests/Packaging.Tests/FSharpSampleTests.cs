using System.Diagnostics;

namespace XCall.Packaging.Tests;

/// <summary>
/// Any .NET language: samples/FSharpClient, an F# program, serves and calls a contract compiled in C#
/// (samples/FSharpClient/Contracts), whose assembly carries the generated proxy and dispatcher, in two processes.
/// </summary>
public sealed class FSharpSampleTests(ITestOutputHelper output)
{
    [Fact]
    public void An_FSharp_client_process_calls_a_CSharp_contract_served_by_another_process()
    {
        string dll = ChildProcess.Metadata("FSharpSampleDll");
        string directory = Path.GetDirectoryName(dll)!;
        string address = $"shm://inventory-{Guid.NewGuid():N}";

        using Process server = ChildProcess.Start("dotnet", [dll, "serve", address], directory);
        try
        {
            Assert.Equal($"serving {address}", server.StandardOutput.ReadLine());

            string client = ChildProcess.Run(output, "dotnet", [dll, address], directory);

            Assert.Equal(
                [
                    "apple: 3",
                    "apple: 7",
                    "pear: 2",
                    "counted apple: 7",
                    "stock apple = 7",
                    "stock pear = 2",
                    "refused: System.InvalidOperationException: only 2 pear left, 5 asked",
                ],
                client.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));

            server.StandardInput.WriteLine(); // the server stops on a line
            Assert.True(server.WaitForExit(ChildProcess.Timeout), "the F# server did not stop");
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
}
