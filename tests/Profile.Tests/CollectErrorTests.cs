using XCall.Profile.Tests.Support;

namespace XCall.Profile.Tests;

/// <summary><c>xcall-profile collect</c> refusing processes it cannot trace.</summary>
public sealed class CollectErrorTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Collect_exits_2_for_a_pid_that_does_not_exist()
    {
        // Above Linux's largest possible pid (2^22).
        const int Pid = 99_999_999;
        using var collect = ChildProcess.StartXCallProfile("collect", "--pid", $"{Pid}", "--duration", "1s");

        int exitCode = await collect.WaitForExitAsync(s_timeout);

        Assert.Equal(2, exitCode);
        Assert.Contains($"no process with pid {Pid}", collect.Error.Text);
    }

    [Fact]
    public async Task Collect_exits_4_for_a_process_that_is_not_dotnet()
    {
        using var sleep = ChildProcess.Start("sleep", "30");
        using var collect = ChildProcess.StartXCallProfile("collect", "--pid", $"{sleep.Id}", "--duration", "1s");

        int exitCode = await collect.WaitForExitAsync(s_timeout);

        Assert.Equal(4, exitCode);
        Assert.Contains($"process {sleep.Id} is not a .NET process (no diagnostic endpoint)", collect.Error.Text);
    }

    [Theory]
    [InlineData("--duration", "10x")]
    [InlineData("--format", "xml")]
    [InlineData("--bogus", "1")]
    public async Task Collect_exits_1_for_options_it_does_not_understand(string option, string value)
    {
        using var collect = ChildProcess.StartXCallProfile("collect", "--pid", "1", option, value);

        int exitCode = await collect.WaitForExitAsync(s_timeout);

        Assert.Equal(1, exitCode);
        Assert.Contains("see 'xcall-profile collect --help'", collect.Error.Text);
    }
}
