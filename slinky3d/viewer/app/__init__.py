"""The interactive app: the window and its draw loop, the mouse and keys, the instant
replay, the click on impacts."""
