namespace XCall.Profile.Processes;

/// <summary>A .NET process that publishes a diagnostic endpoint.</summary>
/// <param name="Pid">Its process id.</param>
/// <param name="Name">Its process name (often <c>dotnet</c>).</param>
/// <param name="CommandLine">Its command line, or its name when that cannot be read.</param>
/// <param name="LoadsXCall">True when it has XCall.FastProxy.dll loaded; null when that cannot be told.</param>
internal sealed record DotnetProcess(int Pid, string Name, string CommandLine, bool? LoadsXCall);
