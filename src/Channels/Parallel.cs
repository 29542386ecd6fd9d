namespace XCall.Channels;

/// <summary>
/// Runs processes in parallel and waits for all of them. Processes are lightweight: an async
/// process holds no thread while it waits, so a program can run hundreds of thousands. When one
/// fails, the others are cancelled, and every failure is reported in one AggregateException.
/// A Parallel is itself a process, so networks nest.
/// </summary>
/// <remarks>With ImplicitUsings this name meets System.Threading.Tasks.Parallel; alias it (<c>using Parallel = XCall.Channels.Parallel;</c>).</remarks>
public sealed class Parallel : IProcess
{
    private readonly List<IProcess> _processes;

    /// <summary>Creates an empty Parallel; see <see cref="Add(IProcess)"/>.</summary>
    public Parallel() => _processes = [];

    /// <summary>Creates a Parallel of <paramref name="processes"/>.</summary>
    public Parallel(params IEnumerable<IProcess> processes) => _processes = [.. processes];

    /// <summary>Creates a Parallel of async methods.</summary>
    public Parallel(params IEnumerable<Func<CancellationToken, Task>> processes) =>
        _processes = [.. processes.Select(static p => (IProcess)new DelegateProcess(p))];

    /// <summary>Adds a process before the Parallel runs.</summary>
    public void Add(IProcess process) => _processes.Add(process);

    /// <summary>Adds an async method as a process before the Parallel runs.</summary>
    public void Add(Func<CancellationToken, Task> process) => _processes.Add(new DelegateProcess(process));

    /// <summary>Runs every process and waits for all.</summary>
    /// <exception cref="AggregateException">One or more processes failed; holds every failure.</exception>
    public Task RunAsync(CancellationToken cancellationToken = default) => ProcessGroup.RunAsync(_processes, cancellationToken);

    /// <summary>Blocking form of <see cref="RunAsync"/>.</summary>
    public void Run() => Blocking.Wait(RunAsync());
}
