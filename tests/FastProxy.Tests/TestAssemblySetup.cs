using System.Runtime.CompilerServices;

namespace XCall.FastProxy.Tests;

internal static class TestAssemblySetup
{
    /// <summary>
    /// Test classes run in parallel, and several of them block thread-pool threads on purpose (a server
    /// method waiting for its cancellation, a client waiting for a timeout, sync calls from async tests). On
    /// a 2-core machine the pool starts with 2 threads and adds one about every half second, so a call
    /// dispatched to the pool (DispatchMode.Concurrent) could wait longer than a test's call timeout. More
    /// threads up front keep the timeout tests about timeouts.
    /// </summary>
    [ModuleInitializer]
    internal static void RaiseThreadPoolMinimum()
    {
        ThreadPool.GetMinThreads(out int workers, out int io);
        ThreadPool.SetMinThreads(Math.Max(workers, 32), io);
    }
}
