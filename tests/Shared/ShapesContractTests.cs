using XCall.Tests.Contracts;
using Xunit;

namespace XCall.Tests.Shared;

/// <summary>
/// Every method shape of the foundation, called through a proxy of some transport. Each transport's test
/// project links this file and derives one class that supplies the proxy.
/// </summary>
public abstract class ShapesContractTests
{
    /// <summary>The proxy under test.</summary>
    protected abstract IShapes Shapes { get; }

    /// <summary>Observes the server side; in-process by default, a proxy when the server is another process.</summary>
    protected virtual IProbe Probe { get; } = new Probe();

    [Fact]
    public void Void_call_runs_on_the_server_before_it_returns()
    {
        // Each test class has a service instance of its own and runs its tests one at a time: nobody else pings it.
        int before = Shapes.PingCount();
        Shapes.Ping();
        Assert.Equal(before + 1, Shapes.PingCount());
    }

    [Fact]
    public void Int_call_returns_result()
    {
        Assert.Equal(5, Shapes.Add(2, 3));
        Assert.Equal(int.MinValue, Shapes.Add(int.MaxValue, 1));
    }

    [Fact]
    public void Overloads_reach_their_own_method()
    {
        Assert.Equal(1_000_000_000_005L, Shapes.Add(2L, 3L));
        Assert.Equal(5, Shapes.Add(2, 3));
    }

    [Fact]
    public void Strings_keep_null_empty_and_unicode()
    {
        Assert.Null(Shapes.Echo(null));
        Assert.Equal("", Shapes.Echo(""));
        Assert.Equal("hola", Shapes.Echo("hola"));
        Assert.Equal("𝄞 héllo \u0000 end", Shapes.Echo("𝄞 héllo \u0000 end"));
        string big = new('x', 100_000);
        Assert.Equal(big, Shapes.Echo(big));
    }

    [Fact]
    public void Byte_arrays_round_trip()
    {
        Assert.Null(Shapes.Reverse(null));
        Assert.Empty(Shapes.Reverse([])!);
        byte[] data = Enumerable.Range(0, 1000).Select(i => (byte)i).ToArray();
        byte[] reversed = Shapes.Reverse(data)!;
        Assert.Equal(data.Reverse(), reversed);
    }

    [Fact]
    public void Arguments_are_copied_not_shared()
    {
        byte[] data = [1, 2, 3];
        Shapes.Mutate(data);
        Assert.Equal(new byte[] { 1, 2, 3 }, data);
    }

    [Fact]
    public void Span_parameter_is_sent()
    {
        Assert.Equal(15, Shapes.Sum([1, 2, 3, 4, 5]));
        Assert.Equal(0, Shapes.Sum([]));
    }

    [Fact]
    public void Span_parameters_of_every_size_arrive_whole_wherever_they_lie_in_transport_memory()
    {
        // Sizes that land a span contiguous in a frame, across a ring's wrap, and beyond a whole ring (read in
        // place where they can be, copied where they cannot: the callee sees the same values).
        var random = new Random(5);
        foreach (int count in new[] { 1, 300, 70_000, 9_000, 300_000, 20_000, 1_100_000, 5 })
        {
            int[] values = [.. Enumerable.Range(0, count).Select(_ => random.Next())];
            int expected = 0;
            foreach (int v in values)
            {
                expected = unchecked(expected + v);
            }
            Assert.Equal(expected, Shapes.Sum(values));
        }
    }

    [Fact]
    public void A_lent_span_arrives_whole_from_an_array_a_slice_of_one_and_a_stack_span()
    {
        // Sizes below and above the shared-memory lending threshold (32 KiB) and the 1 MiB ring.
        var random = new Random(9);
        foreach (int count in new[] { 0, 1, 4096, 40_000, 1 << 20, 3_000_000 })
        {
            byte[] data = new byte[count];
            random.NextBytes(data);
            Assert.Equal(XCall.Tests.Contracts.Shapes.Hash(data), Shapes.Checksum(data));
        }
        byte[] big = new byte[300_000];
        random.NextBytes(big);
        Assert.Equal(XCall.Tests.Contracts.Shapes.Hash(big.AsSpan(1001, 200_000)), Shapes.Checksum(new LentSpan<byte>(big, 1001, 200_000)));
        Span<byte> stack = stackalloc byte[300];
        random.NextBytes(stack);
        Assert.Equal(XCall.Tests.Contracts.Shapes.Hash(stack), Shapes.Checksum(stack));
    }

    [Fact]
    public void Data_class_round_trips()
    {
        var data = new Data { p = 41 };
        Data result = Shapes.Increment(data);
        Assert.Equal(42, result.p);
        Assert.Equal(41, data.p);
    }

    [Fact]
    public void Record_round_trips()
    {
        var point = new Point(3, -4);
        Assert.Equal(point, Shapes.Keep(point));
        Assert.Null(Shapes.Keep(null!));
    }

    [Fact]
    public void Object_with_nested_members_round_trips()
    {
        var order = new Order
        {
            Id = 7,
            Customer = "ACME",
            Lines = [new Line { Sku = "a", Qty = 1 }, new Line { Sku = "b", Qty = 2 }],
            Tags = new() { ["x"] = 1, ["y"] = 2 },
            Origin = new Point(3, 4),
            Price = new Money(12.5m, "EUR"),
            When = new DateTime(2026, 11, 22, 10, 0, 0, DateTimeKind.Utc),
            Key = Guid.NewGuid(),
            Color = Color.Blue,
            Optional = 9,
            Parent = new Order { Id = 1, Customer = null, Lines = [] },
            Path = [new Vec3 { X = 1, Y = 2, Z = 3 }],
            Notes = ["n1", null!, ""],
        };
        Order back = Shapes.RoundTrip(order);
        Assert.NotSame(order, back);
        Assert.Equal(7, back.Id);
        Assert.Equal("ACME", back.Customer);
        Assert.Equal(["a", "b"], back.Lines.Select(l => l.Sku));
        Assert.Equal([1, 2], back.Lines.Select(l => l.Qty));
        Assert.Equal(2, back.Tags!["y"]);
        Assert.Equal(new Point(3, 4), back.Origin);
        Assert.Equal(new Money(12.5m, "EUR"), back.Price);
        Assert.Equal(order.When, back.When);
        Assert.Equal(DateTimeKind.Utc, back.When.Kind);
        Assert.Equal(order.Key, back.Key);
        Assert.Equal(Color.Blue, back.Color);
        Assert.Equal(9, back.Optional);
        Assert.Equal(1, back.Parent!.Id);
        Assert.Null(back.Parent.Customer);
        Assert.Null(back.Parent.Parent);
        Assert.Equal(3f, back.Path![0].Z);
        Assert.Equal(new string?[] { "n1", null, "" }, back.Notes!.AsEnumerable());
    }

    [Fact]
    public void Constructor_initialised_type_round_trips()
    {
        Immutable made = Shapes.Make(21, "b");
        Assert.Equal(21, made.A);
        Assert.Equal("b", made.B);
        Assert.Equal(42, made.Computed);
    }

    [Fact]
    public void Structs_with_and_without_references_round_trip()
    {
        Assert.Equal(new Money(5m, "USDx2"), Shapes.Convert(new Money(2.5m, "USD")));
        Vec3 v = Shapes.Scale(new Vec3 { X = 1, Y = -2, Z = 0.5f }, 2);
        Assert.Equal((2f, -4f, 1f), (v.X, v.Y, v.Z));
    }

    [Fact]
    public void Framework_value_types_round_trip()
    {
        var d = new DateTime(2026, 2, 28, 23, 0, 0, DateTimeKind.Local);
        Assert.Equal(d.AddDays(1), Shapes.Tomorrow(d));
        Assert.Equal(DateTimeKind.Local, Shapes.Tomorrow(d).Kind);
        Assert.Equal(79228162514264337593543950335m, Shapes.AddDecimal(79228162514264337593543950334m, 1m));
        Guid g = Guid.NewGuid();
        Assert.Equal(g, Shapes.Same(g));
        Assert.Equal(Color.Red, Shapes.Next(Color.Blue));
    }

    [Fact]
    public void Ref_and_out_parameters_are_copied_back()
    {
        int a = 1, b = 2;
        Shapes.Swap(ref a, ref b);
        Assert.Equal((2, 1), (a, b));
        Assert.True(Shapes.TryParse("123", out int value));
        Assert.Equal(123, value);
        Assert.False(Shapes.TryParse("x", out value));
        Assert.Equal(0, value);
    }

    [Fact]
    public void Collections_round_trip()
    {
        Assert.Equal(["a", null, "added"], Shapes.Names(["a", null]));
        Dictionary<string, List<int>> grouped = Shapes.Group(new() { ["a"] = [1, 2], ["b"] = [] })!;
        Assert.Equal([10, 20], grouped["A"]);
        Assert.Empty(grouped["B"]);
        Assert.Null(Shapes.Group(null));
        Assert.Equal([1, 4, 9], Shapes.Squares([1, 2, 3])!);
        Assert.Null(Shapes.Squares(null));
        Assert.Equal([2.0, 4.0], Shapes.Doubles(new double[] { 1, 2 }).ToArray());
    }

    [Fact]
    public void Nullable_values_round_trip()
    {
        Assert.Equal(8, Shapes.MaybeDouble(4));
        Assert.Null(Shapes.MaybeDouble(null));
    }

    [Fact]
    public async Task Task_methods_complete()
    {
        Assert.Equal(7, await Shapes.AddAsync(3, 4));
        await Shapes.PingAsync();
        Assert.Equal("ab", await Shapes.ConcatAsync("a", "b"));
        await Shapes.DelayAsync(1, CancellationToken.None);
        Order back = await Shapes.RoundTripAsync(new Order { Id = 3 });
        Assert.Equal(3, back.Id);
    }

    [Fact]
    public async Task Many_async_calls_in_flight_complete()
    {
        Task<int>[] calls = [.. Enumerable.Range(0, 200).Select(i => Shapes.AddAsync(i, i))];
        int[] results = await Task.WhenAll(calls);
        Assert.Equal(Enumerable.Range(0, 200).Select(i => 2 * i), results);
    }

    [Fact]
    public async Task One_way_call_returns_and_arrives()
    {
        string message = "one-way " + Guid.NewGuid();
        Shapes.Post(message);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await Probe.WaitPostedAsync(message, timeout.Token);
    }

    [Fact]
    public void Remote_exception_carries_type_message_and_stack()
    {
        var ex = Assert.Throws<RemoteInvocationException>(() => Shapes.Fail("boom"));
        Assert.Equal("System.InvalidOperationException", ex.RemoteTypeName);
        Assert.Equal("boom", ex.RemoteMessage);
        Assert.Contains(nameof(Contracts.Shapes.Fail), ex.RemoteStackTrace);
    }

    [Fact]
    public async Task Async_remote_exception_surfaces()
    {
        var ex = await Assert.ThrowsAsync<RemoteInvocationException>(() => Shapes.FailAsync("bad"));
        Assert.Equal("System.ArgumentException", ex.RemoteTypeName);
        Assert.Equal("bad", ex.RemoteMessage);
    }

    [Fact]
    public async Task Cancelling_an_async_call_cancels_it()
    {
        using var cts = new CancellationTokenSource();
        Task call = Shapes.DelayAsync(600_000, cts.Token);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => call);
    }

    [Fact]
    public async Task Cancelling_a_sync_call_cancels_the_remote_method()
    {
        using var cts = new CancellationTokenSource();
        Task<int> call = Task.Run(() => Shapes.WaitForCancel(cts.Token));
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (await Probe.NextStartedAsync(timeout.Token) != nameof(IShapes.WaitForCancel))
        {
        }
        cts.Cancel();
        Exception ex = await Assert.ThrowsAnyAsync<Exception>(() => call);
        Assert.True(ex is OperationCanceledException || ex is RemoteInvocationException { RemoteTypeName: "System.OperationCanceledException" }, ex.ToString());
    }

    [Fact]
    public void Sync_call_with_an_already_cancelled_token_fails_and_the_connection_stays_usable()
    {
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        Exception ex = Assert.ThrowsAny<Exception>(() => Shapes.WaitForCancel(cts.Token));
        Assert.True(ex is OperationCanceledException || ex is RemoteInvocationException { RemoteTypeName: "System.OperationCanceledException" }, ex.ToString());
        Assert.Equal(3, Shapes.Add(1, 2));
        Assert.Equal(5, Shapes.Add(2, 3));
    }

    [Fact]
    public void Calls_from_many_threads_get_their_own_results()
    {
        const int Threads = 8;
        const int Calls = 2_000;
        int failures = 0;
        Parallel.For(0, Threads, new ParallelOptions { MaxDegreeOfParallelism = Threads }, t =>
        {
            for (int i = 0; i < Calls; i++)
            {
                if (Shapes.Add(t, i) != t + i)
                {
                    Interlocked.Increment(ref failures);
                }
            }
        });
        Assert.Equal(0, failures);
    }

    // ---------------------------------------------------------------- object graphs

    [Fact]
    public void Million_node_linked_list_travels_both_ways()
    {
        const int Count = 1_000_000;
        Node head = Node.Chain(Count)!;

        Assert.Equal(Count, Shapes.Length(head));
        Node? reversed = Shapes.ReverseList(head);

        int expected = Count - 1;
        int wrong = 0;
        for (Node? node = reversed; node is not null; node = node.Next)
        {
            wrong += node.Value == expected-- ? 0 : 1;
        }
        Assert.Equal(-1, expected);
        Assert.Equal(0, wrong);
        // The callee reversed its own copy.
        Assert.Equal((0, 1), (head.Value, head.Next!.Value));
    }

    [Fact]
    public void Cyclic_graph_arrives_with_its_cycles_and_shared_vertices()
    {
        var a = new GraphNode { Name = "a" };
        var b = new GraphNode { Name = "b" };
        a.Edges = [b, a];
        b.Edges = [a];
        var graph = new Graph { Nodes = [a, b], Root = a };

        Graph back = Shapes.Touch(graph);

        Assert.NotSame(graph, back);
        Assert.Equal(1, back.Touches);
        GraphNode a2 = back.Nodes[0];
        GraphNode b2 = back.Nodes[1];
        Assert.Equal(("a!", "b!"), (a2.Name, b2.Name));
        Assert.Same(a2, back.Root);
        Assert.Same(b2, a2.Edges[0]);
        Assert.Same(a2, a2.Edges[1]);
        Assert.Same(a2, b2.Edges[0]);
        Assert.Equal((0, "a"), (graph.Touches, a.Name));
    }

    [Fact]
    public void Object_passed_as_two_arguments_arrives_as_one_object()
    {
        var data = new Data { p = 1 };
        Assert.True(Shapes.AreSame(data, data));
        Assert.False(Shapes.AreSame(data, new Data { p = 1 }));
    }

    [Fact]
    public void Polymorphic_array_keeps_runtime_types_and_shared_elements()
    {
        var circle = new Circle { X = 1, Y = 2, Radius = 3 };
        var square = new Square { X = -1, Side = 4 };

        Shape[] back = Shapes.Scale([circle, square, circle], 2);

        Circle c = Assert.IsType<Circle>(back[0]);
        Assert.Same(c, back[2]);
        Assert.Equal((1.0, 2.0, 6.0), (c.X, c.Y, c.Radius));
        Square s = Assert.IsType<Square>(back[1]);
        Assert.Equal((-1.0, 8.0), (s.X, s.Side));
        Assert.Equal(3, circle.Radius);
    }

    [Fact]
    public void Polymorphic_list_round_trips()
    {
        List<Shape> sorted = Shapes.ByArea([new Square { Side = 3 }, new Circle { Radius = 1 }, new Square { Side = 1 }]);

        Assert.Equal([typeof(Square), typeof(Circle), typeof(Square)], sorted.Select(s => s.GetType()));
        Assert.Equal((1.0, 1.0, 3.0), (((Square)sorted[0]).Side, ((Circle)sorted[1]).Radius, ((Square)sorted[2]).Side));
    }

    [Fact]
    public void Subtype_missing_from_the_known_types_is_refused_by_the_sender()
    {
        var ex = Assert.Throws<XCallException>(() => Shapes.Scale([new Circle(), new Triangle { Base = 1 }], 2));

        Assert.Contains(typeof(Triangle).FullName!, ex.Message);
        Assert.Contains("[XCallKnownType(typeof(Triangle), id)]", ex.Message);
        Assert.Equal(5, Shapes.Add(2, 3));
    }

    [Fact]
    public void Records_built_by_constructor_and_init_only_members_round_trip()
    {
        var person = new Person("Ada", new Address("London", "N1"), ["math", "engines"]);

        Person moved = Shapes.Move(person, "Paris");
        Settings promoted = Shapes.Promote(new Settings { Name = "ops", Level = 1, Owner = person, Flags = ["a"] });

        Assert.Equal(new Address("Paris", "N1"), moved.Home);
        Assert.Equal(["math", "engines"], moved.Tags.AsEnumerable());
        Assert.Equal(("OPS", 2), (promoted.Name, promoted.Level));
        Assert.Equal(person.Home, promoted.Owner!.Home);
        Assert.Equal(["a", "promoted"], promoted.Flags.Order());
    }

    [Fact]
    public void Hash_sets_and_immutable_arrays_round_trip()
    {
        Assert.Equal(["a", "b", "c"], Shapes.Union(["a", "b"], ["b", "c"]).Order());
        Assert.Equal([2, 4], Shapes.Evens([1, 2, 3, 4]).AsEnumerable());
        Assert.Empty(Shapes.Evens([]));
        Assert.True(Shapes.Evens(default).IsDefault);
    }

    [Fact]
    public void Dictionary_of_lists_of_polymorphic_objects_round_trips()
    {
        Dictionary<string, List<Shape>> groups = Shapes.GroupByKind([new Circle { Radius = 1 }, new Square { Side = 2 }, new Circle { Radius = 3 }]);

        Assert.Equal([1.0, 3.0], groups["Circle"].Cast<Circle>().Select(c => c.Radius));
        Assert.Equal(2, Assert.IsType<Square>(Assert.Single(groups["Square"])).Side);
    }

    [Fact]
    public void Registered_marshaller_carries_a_framework_type()
    {
        Assert.Equal(new Uri("https://example.org/a/c?x=1"), Shapes.Resolve(new Uri("https://example.org/a/b"), "c?x=1"));
    }
}
