# python.c calls the sampler for its BPF map: wrapped, no BPF in the unit test
TEST_python_LDFLAGS = -Wl,--wrap=sampler__python_set_proc -Wl,--wrap=sampler__python_del_proc \
	-Wl,--wrap=sampler__renote_pid -Wl,--wrap=sampler__python_stats \
	-Wl,--wrap=sampler__task_fsbase_off
