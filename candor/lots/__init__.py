"""lots"""
