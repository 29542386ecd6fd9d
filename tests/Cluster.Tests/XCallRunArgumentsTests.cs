using XCall.Cli;

namespace XCall.Cluster.Tests;

public sealed class XCallRunArgumentsTests
{
    [Fact]
    public void Reads_the_ranks_and_the_program_after_the_separator()
    {
        RunSettings settings = CommandLine.ParseRun(["-n", "4", "--job-id", "j1", "--", "dotnet", "app.dll", "-n", "x"], out string? error)!;
        Assert.Null(error);
        Assert.Equal((4, "dotnet", "j1", (string?)null), (settings.Ranks, settings.Program, settings.JobId, settings.Store));
        Assert.Equal(["app.dll", "-n", "x"], settings.Arguments);
    }

    [Theory]
    [InlineData("-- app", "-n N is required")]
    [InlineData("dotnet app.dll", "unknown option 'dotnet'")]
    [InlineData("-n 0 -- app", "at least 1")]
    [InlineData("-n 2", "follows '--'")]
    [InlineData("-n 2 --", "follows '--'")]
    [InlineData("-x 2 -- app", "unknown option")]
    [InlineData("-n", "needs a value")]
    public void A_mistake_is_an_error_saying_what_is_wrong(string args, string expected)
    {
        Assert.Null(CommandLine.ParseRun(args.Split(' '), out string? error));
        Assert.Contains(expected, error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("32768\t60999\n", 32768)]
    [InlineData("49152 65535", 49152)]
    [InlineData(null, 32768)]
    [InlineData("", 32768)]
    [InlineData("garbage", 32768)]
    [InlineData("0\t100", 32768)]
    public void The_store_port_is_picked_below_the_first_ephemeral_port_the_kernel_names(string? text, int expected)
    {
        // xcall run's store port comes from FixedPortsFrom up to this port: one the kernel may hand to any socket that
        // binds port 0 or connects between the pick and rank 0's bind (another test's listener, say) is never picked.
        Assert.Equal(expected, WorldRun.EphemeralPortsFrom(text));
        Assert.True(expected - WorldRun.FixedPortsFrom > 1024);
    }
}
