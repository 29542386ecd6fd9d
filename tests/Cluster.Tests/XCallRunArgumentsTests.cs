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
}
